package cpu

import (
	"testing"
	"unsafe"
)

func TestKVBuffer(t *testing.T) {
	for _, small := range []bool{false, true} {
		be := NewWithOptions(Options{Threads: 1, SmallPages: small})
		for _, n := range []int{0, 1, 1000, kvHugeMin / 2, kvHugeMin/2 + 4097} {
			buf := be.KVBuffer(n)
			if len(buf) != n {
				t.Fatalf("small pages %v: KVBuffer(%d) has %d elements", small, n, len(buf))
			}
			if n == 0 {
				continue
			}
			for i, v := range buf {
				if v != 0 {
					t.Fatalf("small pages %v: KVBuffer(%d)[%d] = %d, want zeroed memory", small, n, i, v)
				}
			}
			buf[0], buf[n-1] = 1, 2
			if huge := !small && 2*n >= kvHugeMin; huge && uintptr(unsafe.Pointer(&buf[0]))%hugePage != 0 {
				t.Errorf("KVBuffer(%d) starts at %p, not on a huge-page boundary", n, &buf[0])
			}
		}
		be.Close()
	}
}
