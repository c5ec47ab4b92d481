// Package static holds the console's browser assets, served from inside the
// binary: box-office machines may have no internet, so nothing comes from a
// CDN.
//
// Vendored from npm (copied from the packages' dist/ directories):
//   - htmx.min.js: htmx.org 2.0.11 (BSD Zero Clause)
//   - sse.min.js:  htmx-ext-sse 2.2.4 (BSD Zero Clause)
//   - jsqr.js:     jsQR 1.4.0 (Apache License 2.0), from github.com/cozmo/jsQR
//     dist/, a QR decoder for door.js's camera where the browser has none
//
// console.css, console.js, door.js, seatmap.css and seatmap.js are ours.
package static

import "embed"

// FS holds every asset at its file name.
//
//go:embed *.js *.css
var FS embed.FS
