package hub_test

import (
	"fmt"

	"github.com/splash-inference/splash/model/hub"
)

func ExampleParseRef() {
	ref, err := hub.ParseRef("Qwen/Qwen3-0.6B@main")
	if err != nil {
		panic(err)
	}
	fmt.Println(ref.RepoID(), ref.Revision)
	// Output: Qwen/Qwen3-0.6B main
}

func ExampleOptionsFromEnv() {
	env := map[string]string{"HF_HOME": "/data/hf", "HF_ENDPOINT": "http://127.0.0.1:9999"}
	opts := hub.OptionsFromEnv(func(k string) string { return env[k] })
	fmt.Println(opts.CacheDir, opts.Endpoint)
	// Output: /data/hf/hub http://127.0.0.1:9999
}
