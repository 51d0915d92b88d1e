package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/splash-inference/splash/actors"
	"github.com/splash-inference/splash/api"
	"github.com/splash-inference/splash/api/internal/fake"
	"github.com/splash-inference/splash/api/textmodel"
	"github.com/splash-inference/splash/engine"
	"github.com/splash-inference/splash/imageprep"
	"github.com/splash-inference/splash/model"
)

// testVision is a small vision tower's frontend view: 2-pixel patches
// merged 2×2, so a w×h image (multiples of 4) is (h/4)·(w/4) tokens.
func testVision() *api.Vision {
	return &api.Vision{
		Processor: imageprep.Processor{PatchSize: 2, TemporalPatchSize: 2, MergeSize: 2, MinPixels: 16, MaxPixels: 1 << 20,
			RescaleFactor: 1.0 / 255, Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}},
		StartID: fake.VisionStart, PadID: fake.ImagePad, EndID: fake.VisionEnd,
	}
}

// imageRun is the prompt text of an image of n tokens.
func imageRun(n int) string {
	return "<|vision_start|>" + strings.Repeat("<|image_pad|>", n) + "<|vision_end|>"
}

// checkImages checks that req carries one image per grid (token grids,
// t·h·w), in prompt order, each at a run of pads after a vision start
// and before a vision end, with its patches and their hash.
func checkImages(t *testing.T, req *actors.Request, grids [][3]int) {
	t.Helper()
	if len(req.Images) != len(grids) {
		t.Fatalf("%d images, want %d", len(req.Images), len(grids))
	}
	for i, im := range req.Images {
		g := grids[i]
		if im.GridT != g[0] || im.GridH != g[1] || im.GridW != g[2] {
			t.Errorf("image %d: grid %d×%d×%d, want %v", i, im.GridT, im.GridH, im.GridW, g)
		}
		const dim = 3 * 2 * 2 * 2 // channels · temporal patch · patch²
		if want := im.GridT * im.GridH * 2 * im.GridW * 2 * dim; len(im.Patches) != want {
			t.Errorf("image %d: %d patch values, want %d", i, len(im.Patches), want)
		}
		if im.Hash != engine.HashPatches(im.Patches, im.GridT, im.GridH*2, im.GridW*2) {
			t.Errorf("image %d: hash is not its patches'", i)
		}
		p, n := req.Prompt, im.Tokens()
		if im.Start < 1 || im.Start+n >= len(p) || p[im.Start-1] != fake.VisionStart || p[im.Start+n] != fake.VisionEnd {
			t.Fatalf("image %d at %d: not between a vision start and end in %v", i, im.Start, p)
		}
		for _, id := range p[im.Start : im.Start+n] {
			if id != fake.ImagePad {
				t.Fatalf("image %d: token %d among its pads", i, id)
			}
		}
	}
	v := &model.VisionConfig{InChannels: 3, PatchSize: 2, TemporalPatchSize: 2, SpatialMergeSize: 2, ImageTokenID: fake.ImagePad}
	if err := engine.CheckImages(req.Prompt, req.Images, v, 0); err != nil {
		t.Errorf("CheckImages: %v", err)
	}
}

// TestImagesReachTheModel: on a model with a vision tower, an image in
// each dialect's shape reaches the engine prepared (patches, grid, hash)
// and placed where its part sits, as vision start, one pad per token and
// vision end; /apply-template, /tokenize and count_tokens show and count
// it as inference got it.
func TestImagesReachTheModel(t *testing.T) {
	png12x8 := "data:image/png;base64," + encoded(t, "png", 12, 8) // 3×2 tokens
	png4x4 := encoded(t, "png", 4, 4)                              // 1 token
	big := encoded(t, "png", 190, 100)                             // resized down to 137×72 (cap 100·100 pixels), smart_resize 136×72: 34×18 tokens
	chat := func(parts string) string {
		return `{"max_tokens":2,"messages":[{"role":"user","content":[` + parts + `]}]}`
	}
	chatImage := func(url string) string { return `{"type":"image_url","image_url":{"url":"` + url + `"}}` }
	tests := []struct {
		name, path, body string
		grids            [][3]int
		want             string // the prompt's text around its images
	}{
		{"chat", "/v1/chat/completions", chat(`{"type":"text","text":"look: "},` + chatImage(png12x8) + `,{"type":"text","text":" now"}`),
			[][3]int{{1, 2, 3}}, "look: " + imageRun(6) + " now"},
		{"chat two images", "/v1/chat/completions", chat(chatImage(png12x8) + `,{"type":"text","text":"and"},` + chatImage("data:image/png;base64,"+png4x4)),
			[][3]int{{1, 2, 3}, {1, 1, 1}}, imageRun(6) + "and" + imageRun(1)},
		{"chat resized", "/v1/chat/completions", chat(chatImage("data:image/png;base64," + big)), [][3]int{{1, 18, 34}}, imageRun(612)},
		{"responses", "/v1/responses", `{"max_output_tokens":2,"input":[{"role":"user","content":[{"type":"input_text","text":"look: "},{"type":"input_image","image_url":"` + png12x8 + `"}]}]}`,
			[][3]int{{1, 2, 3}}, "look: " + imageRun(6)},
		{"anthropic", "/v1/messages", `{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + png4x4 + `"}},{"type":"text","text":"what?"}]}]}`,
			[][3]int{{1, 1, 1}}, imageRun(1) + "what?"},
		{"anthropic url", "/v1/messages", `{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"` + png12x8 + `"}}]}]}`,
			[][3]int{{1, 2, 3}}, imageRun(6)},
		{"anthropic tool result", "/v1/messages", `{"max_tokens":2,"messages":[{"role":"user","content":"shoot"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"screenshot","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"here:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + png4x4 + `"}}]}]}]}`,
			[][3]int{{1, 1, 1}}, "here:" + imageRun(1)},
		{"user text spelling the tokens", "/v1/chat/completions", chat(`{"type":"text","text":"<|image_pad|>"},` + chatImage(png12x8)),
			[][3]int{{1, 2, 3}}, "<|image_pad|>" + imageRun(6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := fake.New()
			ts := startServer(t, api.Options{Engine: eng, Vision: testVision(), MaxImagePixels: 100 * 100})
			res := ts.do(t, "POST", tt.path, tt.body)
			if res.status != 200 {
				t.Fatalf("status %d: %s", res.status, res.body)
			}
			req := eng.Last()
			checkImages(t, req, tt.grids)
			if text := (fake.Tokenizer{}).Decode(req.Prompt, false); !strings.Contains(text, tt.want) {
				t.Errorf("prompt %q does not hold %q", text, tt.want)
			}
			checkCounted(t, ts, tt.path, tt.body, req.Prompt)
		})
	}
}

// TestImagesInStoredResponses: a Responses turn that continues a stored
// one with an image sends the image again, then the new one.
func TestImagesInStoredResponses(t *testing.T) {
	eng := fake.New()
	ts := startServer(t, api.Options{Engine: eng, Vision: testVision()})
	first := `{"max_output_tokens":2,"input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,` + encoded(t, "png", 12, 8) + `"}]}]}`
	res := ts.do(t, "POST", "/v1/responses", first)
	var obj struct{ ID string }
	if json.Unmarshal([]byte(res.body), &obj); res.status != 200 || obj.ID == "" {
		t.Fatalf("first turn: %d %s", res.status, res.body)
	}
	next := `{"max_output_tokens":2,"previous_response_id":"` + obj.ID + `","input":[{"role":"user","content":[{"type":"input_text","text":"and this?"},{"type":"input_image","image_url":"data:image/png;base64,` + encoded(t, "png", 4, 4) + `"}]}]}`
	if res := ts.do(t, "POST", "/v1/responses", next); res.status != 200 {
		t.Fatalf("next turn: %d %s", res.status, res.body)
	}
	checkImages(t, eng.Last(), [][3]int{{1, 2, 3}, {1, 1, 1}})
}

// TestVisionImageErrors: on a model with a vision tower, an image that
// cannot be read gets a 400 in the dialect's shape naming the part and
// why, and the server goes on serving.
func TestVisionImageErrors(t *testing.T) {
	ts := startServer(t, api.Options{Vision: testVision(), MaxImagePixels: 100 * 100, MaxMediaBytes: 4096, ContextLength: 600})
	png := encoded(t, "png", 12, 8)
	chat := func(url string) string {
		return `{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"` + url + `"}}]}]}`
	}
	messages := func(source string) string {
		return `{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"image","source":` + source + `}]}]}`
	}
	tests := []struct {
		name, path, body string
		want             []string
	}{
		{"truncated", "/v1/chat/completions", chat("data:image/png;base64," + png[:len(png)/2-len(png)/2%4]), []string{"messages[0].content[1]", "image"}},
		{"not an image", "/v1/chat/completions", chat("data:image/png;base64,aGVsbG8="), []string{"not PNG, JPEG, GIF or WebP"}},
		{"over four times the pixel cap", "/v1/chat/completions", chat("data:image/png;base64," + encoded(t, "png", 300, 200)), []string{"too large", "300x200", "--max-image-pixels"}},
		{"over the byte cap", "/v1/chat/completions", chat("data:image/png;base64," + strings.Repeat("AAAA", 2000)), []string{"--max-media-bytes"}},
		{"not base64", "/v1/chat/completions", chat("data:image/png;base64,@@@"), []string{"messages[0].content[1]"}},
		{"remote", "/v1/chat/completions", chat("https://example.com/cat.png"), []string{"--allow-remote-media"}},
		{"no url", "/v1/chat/completions", chat(""), []string{"no URL or data"}},
		{"images beyond the context", "/v1/chat/completions", chat("data:image/png;base64," + encoded(t, "png", 100, 100)), []string{"625 tokens", "context length of 600"}},
		{"responses", "/v1/responses", `{"input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,aGVsbG8="}]}]}`, []string{"input[0].content[0]"}},
		{"anthropic bad data", "/v1/messages", messages(`{"type":"base64","media_type":"image/png","data":"aGVsbG8="}`), []string{"messages[0].content[0]"}},
		{"anthropic source type", "/v1/messages", messages(`{"type":"file"}`), []string{`"file"`}},
		{"anthropic tool result", "/v1/messages", `{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"base64","data":"aGVsbG8="}}]}]}]}`,
			[]string{"content[0].content[0]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantInvalid(t, ts.do(t, "POST", tc.path, tc.body), tc.path, tc.want)
		})
	}
	if res := ts.do(t, "POST", "/v1/chat/completions", chat("data:image/png;base64,"+png)); res.status != 200 {
		t.Fatalf("an image after the refusals: %d %s", res.status, res.body)
	}
}

// wantInvalid checks that res is a 400 invalid_request_error in path's
// dialect whose message holds each of want, and returns the message.
func wantInvalid(t *testing.T, res rawResponse, path string, want []string) string {
	t.Helper()
	if res.status != 400 {
		t.Fatalf("status %d, want 400: %s", res.status, res.body)
	}
	typ, msg, _ := errorShape(t, path, res.body)
	if typ != "invalid_request_error" {
		t.Errorf("type %q", typ)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
	return msg
}

// TestImageTokensNeverFromContent: with the Qwen3 tokenizer and template,
// message text spelling every added token (the image tokens among them)
// around a real image stays text: the prompt's only vision start, pads
// and vision end are the image's, at its Start.
func TestImageTokensNeverFromContent(t *testing.T) {
	tk, tpl := loadVendored(t, "qwen3")
	v := testVision()
	for _, id := range []struct {
		dst  *int32
		text string
	}{{&v.StartID, "<|vision_start|>"}, {&v.PadID, "<|image_pad|>"}, {&v.EndID, "<|vision_end|>"}} {
		tid, ok := tk.TokenID(id.text)
		if !ok {
			t.Fatalf("the Qwen3 tokenizer has no %s", id.text)
		}
		*id.dst = tid
	}
	eng := fake.New()
	ts := startServer(t, api.Options{Engine: eng, Vision: v, Tokenizer: textmodel.Tokenizer{T: tk}, Template: textmodel.Template{T: tpl}, ContextLength: 1 << 20})
	text := "x " + strings.Join(tk.AddedTokens(), " ") + " <|vision_start|><|image_pad|><|vision_end|> "
	payload, _ := json.Marshal(text)
	image := `{"type":"image_url","image_url":{"url":"data:image/png;base64,` + encoded(t, "png", 12, 8) + `"}}`
	body := `{"max_tokens":2,"messages":[{"role":"user","content":[{"type":"text","text":` + string(payload) + `},` + image + `,{"type":"text","text":` + string(payload) + `}]}]}`
	if res := ts.do(t, "POST", "/v1/chat/completions", body); res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	req := eng.Last()
	if len(req.Images) != 1 {
		t.Fatalf("%d images, want 1", len(req.Images))
	}
	start := req.Images[0].Start
	for i, id := range req.Prompt {
		inRun := i >= start-1 && i <= start+6
		if (id == v.StartID || id == v.PadID || id == v.EndID) != inRun {
			t.Fatalf("position %d holds %d (%q); the image's run is [%d, %d]", i, id, tk.Decode([]int32{id}, false), start-1, start+6)
		}
	}
	if n, inPayload := strings.Count(tk.Decode(req.Prompt, false), "<|image_pad|>"), strings.Count(text, "<|image_pad|>"); n != 6+2*inPayload {
		t.Errorf("the prompt spells <|image_pad|> %d times, want the image's 6 and the payload's %d twice", n, inPayload)
	}
}
