// Package webui holds Splash's browser chat page: plain HTML, CSS and
// JavaScript embedded in the binary, with no build step and nothing fetched
// from the network at run time. The page talks to the same server's
// /v1/models and /v1/chat/completions (streamed), so it exercises exactly
// the API every other client uses.
//
// The package only knows the files and their URL paths; package api
// (directory api/) mounts them on its router, applies the Host allowlist,
// and decides that they are public (no API key needed to load the page;
// the API calls the page makes still send the key the user types in).
//
// URL layout:
//
//	/               the page (index.html)
//	/webui/<file>   its stylesheet and scripts
package webui
