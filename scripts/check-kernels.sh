#!/bin/sh
# Part of `make test`: every C test on Debian's 6.1 and 6.12 kernels under
# qemu and on the host's kernel (scripts/test-kernels.sh; about two minutes
# under TCG). Skips (77) when qemu or the kernel packages are out of reach.
exec sh "$(dirname "$0")/test-kernels.sh"
