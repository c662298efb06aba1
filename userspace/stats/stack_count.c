/* Counting stack samples, cut stacks and samples without a stack. */
#include "stats/stack_count.h"

void stack_count_packet(struct stack_count *s,
			const Perfetto__Protos__TracePacket *p)
{
	const Perfetto__Protos__PerfSample *ps;

	if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_PERF_SAMPLE)
		return;
	ps = p->perf_sample;
	if (ps->has_kernel_records_lost)
		return; /* a loss notice, not a sample */
	s->samples++;
	if (ps->has_unwind_error &&
	    ps->unwind_error ==
		    PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_MAX_FRAMES_EXCEEDED)
		s->truncated++;
	if (ps->has_unwind_error &&
	    ps->unwind_error ==
		    PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_MEMORY_INVALID)
		s->slice_cut++;
	if (ps->has_unwind_error &&
	    ps->unwind_error ==
		    PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_UNWIND_INFO)
		s->no_cfi++;
	if (!ps->has_callstack_iid)
		s->without_stack++;
	else if (ps->has_unwind_error &&
		 ps->unwind_error ==
			 PERFETTO__PROTOS__PROFILING__STACK_UNWIND_ERROR__UNWIND_ERROR_UNKNOWN)
		s->without_user_stack++; /* the kernel frames alone */
}
