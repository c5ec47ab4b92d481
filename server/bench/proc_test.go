package bench

import (
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
