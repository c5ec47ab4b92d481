package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	go_qr "github.com/piglig/go-qr"

	"seatflow/core"
	"seatflow/core/access"
)

// TestDoorCameraInBrowser: a gate holds a ticket's QR code to the camera
// (Chromium's fake camera plays a video of it) and the ticket is admitted
// at the gate; the code staying in view is not scanned again.
func TestDoorCameraInBrowser(t *testing.T) {
	video := filepath.Join(t.TempDir(), "ticket.y4m")
	bb := startBoxOfficeBrowserFlags(t, []chromedp.ExecAllocatorOption{
		chromedp.Flag("use-fake-ui-for-media-stream", true), // grants the camera
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-video-capture", video), // read when the camera opens
	})
	show := bb.createGridShow("Camera Door", 2, 4)
	orderNo, code := bb.placeOn(show, 81, core.Customer{}, "A-1", "A-2")
	bb.payOrder(orderNo)
	writeQRVideo(t, video, code)
	door := bb.tab("door", access.RoleDoor)
	door.do("point the camera at the ticket",
		chromedp.Navigate(bb.url+"/console/door"),
		chromedp.WaitVisible(chromedp.ID("door-code")),
		chromedp.SendKeys(chromedp.ID("door-gate"), "east"),
		chromedp.WaitVisible(chromedp.ID("door-camera")),
		chromedp.Click(chromedp.ID("door-camera")),
	)
	door.waitJS("the ticket admitted", fmt.Sprintf(`document.querySelector("#door-result.ok[data-code='%s']") !== null`, code))
	if n := bb.a.count(fmt.Sprintf("order_seat WHERE order_no = '%s' AND checkin_gate = 'east'", orderNo)); n != 2 {
		t.Fatalf("%d seats admitted at east, want 2", n)
	}
	// The reader looks every 200 ms and scans a code again once it has
	// been out of view 1.5 s: a code in view that was scanned again would
	// be, within this, and answer already_checked_in.
	time.Sleep(2500 * time.Millisecond)
	if got := evalIn[string](door, "the answer", `document.getElementById("door-result").className`); got != "door-result ok" {
		t.Errorf("answer %q after the code stayed in view, want it still admitted", got)
	}
	door.do("stop the camera", chromedp.Click(chromedp.ID("door-camera")))
	door.waitJS("the camera off", `document.getElementById("door-video").hidden &&
		document.getElementById("door-camera").getAttribute("aria-pressed") === "false"`)
}

// writeQRVideo writes a one-frame YUV4MPEG2 video of text's QR code, black
// on white, 8 pixels a module, as Chromium's fake camera plays it.
func writeQRVideo(t *testing.T, path, text string) {
	t.Helper()
	q, err := go_qr.EncodeText(text, go_qr.Medium)
	if err != nil {
		t.Fatal(err)
	}
	const w, h, scale = 640, 480, 8
	luma := bytes.Repeat([]byte{255}, w*h)
	x0, y0 := (w-q.Size()*scale)/2, (h-q.Size()*scale)/2
	for y := range q.Size() * scale {
		for x := range q.Size() * scale {
			if q.Module(x/scale, y/scale) {
				luma[(y0+y)*w+x0+x] = 0
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "YUV4MPEG2 W%d H%d F30:1 Ip A1:1 C420jpeg\nFRAME\n", w, h)
	b.Write(luma)
	b.Write(bytes.Repeat([]byte{128}, w*h/2)) // no colour: U and V at 128
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}
