package cpu

import "syscall"

// MADV_HUGEPAGE and MADV_COLLAPSE (<asm-generic/mman-common.h>), which
// the syscall package does not name.
const (
	madvHugePage = 14
	madvCollapse = 25
)

// adviseHugePages asks Linux to back b with transparent huge pages, and to
// do it now: b may be heap memory already touched in 4 KiB pages, which
// the advice alone would leave to the kernel's background collapsing
// (khugepaged, copying while the model runs), so MADV_COLLAPSE (Linux 6.1
// and later) collapses the range synchronously, populating it. Both are
// best effort: with THP set to "never", an older kernel or no free huge
// pages, b keeps ordinary pages, so errors are ignored.
func adviseHugePages(b []byte) {
	preferHugePages(b)
	_ = syscall.Madvise(b, madvCollapse)
}

// preferHugePages asks Linux to back b with transparent huge pages as its
// pages are first touched; unlike adviseHugePages it does not populate b.
func preferHugePages(b []byte) {
	_ = syscall.Madvise(b, madvHugePage)
}
