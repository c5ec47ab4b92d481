package bench

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

func TestParseArgs(t *testing.T) {
	noEnv := func(string) string { return "" }
	tests := []struct {
		name    string
		args    []string
		getenv  func(string) string
		check   func(t *testing.T, o Options)
		help    bool
		wantErr string
	}{
		{name: "rush buyers mode", args: []string{"rush", "--buyers-mode", "both"}, check: func(t *testing.T, o Options) {
			if o.BuyersMode != BuyersBoth {
				t.Errorf("buyers mode = %q", o.BuyersMode)
			}
		}},
		{name: "rush buyers mode unknown", args: []string{"rush", "--buyers-mode", "some"}, wantErr: "--buyers-mode"},
		{name: "rush server nofile", args: []string{"rush", "--server-nofile", "4096"}, check: func(t *testing.T, o Options) {
			if o.ServerNoFile != 4096 {
				t.Errorf("server nofile = %d", o.ServerNoFile)
			}
		}},
		{name: "rush server nofile too low", args: []string{"rush", "--server-nofile", "100"}, wantErr: "--server-nofile 100"},
		{name: "waitlist defaults", args: []string{"waitlist"}, check: func(t *testing.T, o Options) {
			if o.Holds != 5000 || o.Entries != 5000 || o.ExpiryRate != 1000 || o.Hammer != 16 || o.HammerRate != 1000 || waitlistHoldTTL(o) != 10*time.Second {
				t.Errorf("waitlist defaults: %+v, hold TTL %v", o, waitlistHoldTTL(o))
			}
		}},
		{name: "waitlist no entries", args: []string{"waitlist", "--entries", "0"}, wantErr: "--entries 0"},
		{name: "defaults", args: []string{"place"}, check: func(t *testing.T, o Options) {
			if o.Scenario != "place" || o.Stack != StackEmbedded || o.Clients != 64 || o.Rows*o.Cols != 5000 ||
				o.Rounds != 2 || o.Orders != 10000 || o.DupEvery != 9 || o.HoldTTL != 40*time.Second {
				t.Errorf("defaults: %+v", o)
			}
			if !slices.Equal(o.Modes, []core.DelayMode{core.DelayTimer}) {
				t.Errorf("embedded modes = %v, want timer", o.Modes)
			}
		}},
		{name: "flags after the scenario", args: []string{"expire", "--stack", "real", "--orders", "500", "--ttl", "20s"},
			check: func(t *testing.T, o Options) {
				if o.Stack != StackReal || o.Orders != 500 || o.HoldTTL != 20*time.Second {
					t.Errorf("got %+v", o)
				}
				if !slices.Equal(o.Modes, []core.DelayMode{core.DelayLevels, core.DelayTimer}) {
					t.Errorf("real modes = %v, want levels,timer", o.Modes)
				}
			}},
		{name: "scenario after the flags", args: []string{"--clients", "8", "pay"}, check: func(t *testing.T, o Options) {
			if o.Scenario != "pay" || o.Clients != 8 {
				t.Errorf("got %+v", o)
			}
		}},
		{name: "explicit modes, repeats dropped", args: []string{"expire", "--modes", "levels, levels,timer"},
			check: func(t *testing.T, o Options) {
				if !slices.Equal(o.Modes, []core.DelayMode{core.DelayLevels, core.DelayTimer}) {
					t.Errorf("modes = %v", o.Modes)
				}
			}},
		{name: "service URLs from the test environment", args: []string{"limits", "--stack", "real"},
			getenv: func(k string) string {
				if k == "SEATFLOW_TEST_REDIS" {
					return "redis://localhost:6380/1"
				}
				return ""
			},
			check: func(t *testing.T, o Options) {
				if o.Redis != "redis://localhost:6380/1" || !strings.Contains(o.MySQL, "127.0.0.1:3306") {
					t.Errorf("got redis %q mysql %q", o.Redis, o.MySQL)
				}
			}},
		{name: "direct by default", args: []string{"place", "--stack", "real"}, check: func(t *testing.T, o Options) {
			if o.Proxied || o.stackLabel() != "real" {
				t.Errorf("proxied %v, label %q", o.Proxied, o.stackLabel())
			}
		}},
		{name: "rtt", args: []string{"place", "--stack", "real", "--rtt", "1ms"}, check: func(t *testing.T, o Options) {
			if !o.Proxied || o.RTT != time.Millisecond || o.stackLabel() != "real +1ms rtt" {
				t.Errorf("proxied %v, rtt %v, label %q", o.Proxied, o.RTT, o.stackLabel())
			}
		}},
		{name: "rtt 0 keeps the proxies", args: []string{"limits", "--stack", "real", "--rtt", "0s"}, check: func(t *testing.T, o Options) {
			if !o.Proxied || o.RTT != 0 || o.stackLabel() != "real +0s rtt" {
				t.Errorf("proxied %v, rtt %v, label %q", o.Proxied, o.RTT, o.stackLabel())
			}
		}},
		{name: "rtt not a duration", args: []string{"place", "--stack", "real", "--rtt", "1"}, wantErr: `--rtt "1"`},
		{name: "rtt negative", args: []string{"place", "--stack", "real", "--rtt", "-1ms"}, wantErr: "--rtt -1ms"},
		{name: "rtt too long", args: []string{"place", "--stack", "real", "--rtt", "2s"}, wantErr: "--rtt 2s"},
		{name: "rtt on embedded", args: []string{"place", "--rtt", "1ms"}, wantErr: "--rtt needs --stack real"},
		{name: "rtt with expire", args: []string{"expire", "--stack", "real", "--rtt", "1ms"}, wantErr: "not expire"},
		{name: "help", args: []string{"-h"}, help: true},
		{name: "cpu profile with expire", args: []string{"expire", "--cpu-profile", "cpu.out"}, wantErr: "--cpu-profile applies to place, pay, all, rush and waitlist"},
		{name: "profile time under a second", args: []string{"place", "--cpu-profile", "cpu.out", "--profile-time", "500ms"}, wantErr: "--profile-time 500ms"},
		{name: "cpu profile of place", args: []string{"place", "--cpu-profile", "cpu.out", "--profile-time", "5s"}, check: func(t *testing.T, o Options) {
			if o.CPUProfile != "cpu.out" || o.ProfileTime != 5*time.Second {
				t.Errorf("got %+v", o)
			}
		}},
		{name: "no scenario", args: nil, wantErr: "name a scenario"},
		{name: "unknown scenario", args: []string{"soak"}, wantErr: `unknown scenario "soak"`},
		{name: "two scenarios", args: []string{"place", "pay"}, wantErr: "unexpected arguments"},
		{name: "unknown stack", args: []string{"place", "--stack", "cloud"}, wantErr: `--stack "cloud"`},
		{name: "zero clients", args: []string{"place", "--clients", "0"}, wantErr: "--clients 0"},
		{name: "short ttl", args: []string{"expire", "--ttl", "2s"}, wantErr: "--ttl 2s"},
		{name: "bad mode", args: []string{"expire", "--modes", "cron"}, wantErr: "--modes"},
		{name: "unknown flag", args: []string{"place", "--vegeta"}, wantErr: "flag provided but not defined"},
		{name: "remote MySQL refused", args: []string{"place", "--stack", "real", "--mysql", "mysql://u:p@tcp(10.0.0.5:3306)/db"},
			wantErr: "not loopback"},
		{name: "remote Redis refused", args: []string{"place", "--stack", "real", "--redis", "redis://db.example.com:6379/0"},
			wantErr: "not loopback"},
		{name: "remote RocketMQ refused", args: []string{"place", "--stack", "real", "--rocketmq", "rocketmq://192.168.1.2:9876"},
			wantErr: "not loopback"},
		{name: "remote hosts do not matter on embedded", args: []string{"place", "--redis", "redis://db.example.com:6379/0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := tt.getenv
			if getenv == nil {
				getenv = noEnv
			}
			o, help, err := parseArgs(tt.args, getenv, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if help != tt.help {
				t.Fatalf("help = %v, want %v", help, tt.help)
			}
			if tt.check != nil {
				tt.check(t, o)
			}
		})
	}
}

func TestLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:3306", true},
		{"127.1.2.3:1", true},
		{"[::1]:6379", true},
		{"localhost:9876", true},
		{"0.0.0.0:3306", false},
		{"10.0.0.1:3306", false},
		{"example.com:80", false},
		{"127.0.0.1", false},
	}
	for _, tt := range tests {
		if err := loopback(tt.addr); (err == nil) != tt.ok {
			t.Errorf("loopback(%q) = %v, want ok=%v", tt.addr, err, tt.ok)
		}
	}
}
