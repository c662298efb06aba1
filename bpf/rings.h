/* The rings map of every BPF program that writes records (the recorder's,
 * the benchmark floor's, the synthetic test program's): an array of BPF
 * ring buffers, one per CPU id, indexed by CPU. Userspace sets the outer
 * array's size and creates the inner rings (record/rings.c), each of its
 * own size; the inner declaration is only the template the verifier
 * checks against. Include after vmlinux.h and bpf_helpers.h. */
#ifndef BTR_BPF_RINGS_H
#define BTR_BPF_RINGS_H

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* template only: real sizes set at run time */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

#endif
