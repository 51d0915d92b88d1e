//go:build !linux

package cpu

// adviseHugePages does nothing where there is no madvise(MADV_HUGEPAGE):
// macOS on Apple silicon has 16 KiB pages and no transparent huge pages.
func adviseHugePages(b []byte) {}

// preferHugePages does nothing here, as adviseHugePages.
func preferHugePages(b []byte) {}
