package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    memStatus
		wantErr bool
	}{
		{name: "both lines", text: "Name:\tseatflow\nVmPeak:\t 999 kB\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\nThreads:\t9\n",
			want: memStatus{RSS: 1 << 20, HWM: 2 << 20}},
		{name: "kernel thread without memory lines", text: "Name:\tkthreadd\nState:\tS\n", want: memStatus{}},
		{name: "unexpected unit", text: "VmRSS:\t 1 MB\n", wantErr: true},
		{name: "not a number", text: "VmHWM:\t x kB\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatus(tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    time.Duration
		wantErr bool
	}{
		{name: "plain", text: "4242 (seatflow) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 0 0",
			want: 3 * time.Second},
		{name: "command with spaces and parentheses", text: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0",
			want: 30 * time.Millisecond},
		{name: "no command", text: "garbage", wantErr: true},
		{name: "truncated", text: "1 (x) S 1 2 3", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU(tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestJITThread(t *testing.T) {
	for _, tt := range []struct {
		comm string
		want bool
	}{
		{"C2 CompilerThre", true},
		{"C1 CompilerThre", true},
		{"C2 CompilerThread0", true}, // a kernel that kept the whole name
		{"SendMessageThre", false},
		{"java", false},
		{"", false},
	} {
		if got := jitThread(tt.comm); got != tt.want {
			t.Errorf("jitThread(%q) = %v, want %v", tt.comm, got, tt.want)
		}
	}
}

// TestReadJITCPU: the compiler threads' CPU of a JVM's task list is summed
// and no other thread's; a Go process has none, so 0 and no error; a
// process that is gone is an error, not 0.
func TestReadJITCPU(t *testing.T) {
	root := t.TempDir()
	for tid, th := range map[int]struct {
		comm        string
		utime, stim int
	}{1: {"java", 500, 50}, 2: {"C2 CompilerThre", 300, 20}, 3: {"C1 CompilerThre", 40, 2}, 4: {"SendMessageThre", 70, 7}} {
		dir := filepath.Join(root, "77", "task", fmt.Sprint(tid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (%s) S 1 1 1 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 0 0 0\n", tid, th.comm, th.utime, th.stim)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readJITCPUIn(root, 77)
	if want := time.Duration(300+20+40+2) * time.Second / clockTicks; got != want || err != nil {
		t.Errorf("readJITCPUIn = %v, %v; want %v (C1 and C2 threads only)", got, err, want)
	}
	if got, err := readJITCPU(os.Getpid()); got != 0 || err != nil {
		t.Errorf("readJITCPU(self) = %v, %v; want 0, nil", got, err)
	}
	if _, err := readJITCPU(1 << 30); err == nil {
		t.Error("readJITCPU of a pid that does not exist: no error")
	}
}
