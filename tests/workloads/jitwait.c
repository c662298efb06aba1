/* Workload of off-CPU stacks in code generated at run time, as a JIT
 * makes it: functions written into an anonymous mapping mapped
 * executable (no file, no CFI), each called from main. One calls the C
 * library's nanosleep() (the leaf in libc, its caller the generated
 * code); the other makes the nanosleep system call itself (the leaf in
 * the generated code). Built as distributions build: -O2, no frame
 * pointer. Each sleeps ROUNDS times, 10 ms. Prints, when done:
 *   jitwait tid=TID code=START-END
 * (the mapping's bounds, hex). Usage: jitwait [ROUNDS]. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef long (*sleep_fn)(const struct timespec *, struct timespec *);

int main(int argc, char **argv)
{
	/* mov $imm64, %rax; sub $8, %rsp; call *%rax; add $8, %rsp; ret:
	 * a call out (the stack kept 16-byte aligned) */
	unsigned char call_out[] = { 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
				     0x48, 0x83, 0xec, 0x08, 0xff, 0xd0,
				     0x48, 0x83, 0xc4, 0x08, 0xc3 };
	/* mov $35 (nanosleep), %eax; syscall; ret */
	static const unsigned char own_call[] = { 0xb8, 0x23, 0, 0, 0,
						  0x0f, 0x05, 0xc3 };
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int rounds = argc > 1 ? atoi(argv[1]) : 5, i;
	uint64_t target = (uint64_t)(uintptr_t)&nanosleep;
	unsigned char *code;
	sleep_fn via_libc, direct;

	/* mapped executable at once (the recorder's look at executable
	 * mmaps sees it), written, then no longer writable */
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("jitwait: mmap");
		return 1;
	}
	memcpy(call_out + 2, &target, sizeof(target));
	memcpy(code, call_out, sizeof(call_out));
	memcpy(code + 64, own_call, sizeof(own_call));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("jitwait: mprotect");
		return 1;
	}
	via_libc = (sleep_fn)(void *)code;
	direct = (sleep_fn)(void *)(code + 64);
	for (i = 0; i < rounds; i++) {
		via_libc(&ts, NULL);
		direct(&ts, NULL);
	}
	printf("jitwait tid=%d code=%lx-%lx\n", gettid(),
	       (unsigned long)(uintptr_t)code,
	       (unsigned long)(uintptr_t)code + 4096);
	return 0;
}
