package kvdisk

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// writerDirEnv, when set, makes TestKilledWriterProcess's helper write
// records into that directory until it is killed.
const writerDirEnv = "KVDISK_TEST_WRITER_DIR"

// TestKilledWriterProcess: a process writing records as fast as it can is
// killed with SIGKILL; reopened, the directory serves every record it
// indexes intact (each payload is a function of its index) and holds no
// temporary file.
func TestKilledWriterProcess(t *testing.T) {
	if dir := os.Getenv(writerDirEnv); dir != "" {
		writeForever(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterProcess$")
	cmd.Env = append(os.Environ(), writerDirEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dir, "*"+recordSuffix)); len(m) >= 20 {
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()

	s := open(t, dir, 1<<30)
	st := s.Stats()
	if st.Records < 20 {
		t.Fatalf("%d records survived, want the 20 seen before the kill", st.Records)
	}
	for i := range st.Records { // written one after another: records 0 to Records-1
		got, err := s.Get(KindKV, killEntry(i).Hash)
		if err != nil || !sameEntry(got, killEntry(i)) {
			t.Fatalf("record %d of %d after the kill: %v", i, st.Records, err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*"+tmpSuffix)); len(tmp) != 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
}

// killEntry is record i of the writer: 256 KiB derived from i.
func killEntry(i int) Entry {
	e := entry(i)
	e.Payload = make([]byte, 256<<10)
	for j := range e.Payload {
		e.Payload[j] = byte(i ^ j>>3)
	}
	return e
}

func writeForever(dir string) {
	s, err := Open(Config{Dir: dir, Budget: 1 << 30})
	if err != nil {
		os.Exit(2)
	}
	for i := 0; ; i++ {
		s.Put(killEntry(i))
	}
}
