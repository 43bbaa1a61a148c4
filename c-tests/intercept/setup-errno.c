/* SPDX-License-Identifier: MIT */
/*
 * setup-errno: prints what a raw io_uring_setup answers ("fd" or the
 * errno's number), whether AT_SECURE is set, and NoNewPrivs. Linked with
 * liburing so that the library loads where LD_PRELOAD cannot (AT_SECURE).
 */
#include "raw.h"
#include <sys/auxv.h>
#include <liburing.h>

int main(void)
{
	struct io_uring_params p;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	int fd, nnp = -1;

	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "NoNewPrivs: %d", &nnp);
	if (f)
		fclose(f);
	memset(&p, 0, sizeof(p));
	fd = sys_setup(4, &p);
	printf("setup=%s%d secure=%lu nnp=%d major=%d\n", fd >= 0 ? "fd" : "errno", fd >= 0 ? 0 : errno,
	       getauxval(AT_SECURE), nnp, io_uring_major_version());
	return 0;
}
