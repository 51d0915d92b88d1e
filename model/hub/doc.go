// Package hub resolves a --model value to a model directory on disk: a local
// directory as is, or a Hugging Face repository (owner/repo[@revision]) from
// the Hugging Face cache, downloading what is missing from the hub.
//
// # Cache
//
// The cache is the one huggingface_hub uses, so models downloaded by either
// tool serve both. Its root is HF_HUB_CACHE, else $HF_HOME/hub, else
// ~/.cache/huggingface/hub. A repository lives in models--owner--repo:
//
//	refs/<revision>             the commit a branch or tag pointed at
//	blobs/<sha256 or git sha1>  file contents, named by the hub's etag
//	snapshots/<commit>/<path>   relative symlinks into blobs/
//
// A revision already in the cache with every file a model needs is used
// without contacting the hub (pass a commit or delete refs/<revision> to pick
// up a newer upload). HF_HUB_OFFLINE=1 forbids the hub altogether.
//
// # Hub
//
// The hub is HF_ENDPOINT (default https://huggingface.co):
//
//	GET /api/models/{repo}/revision/{rev}?blobs=true   commit sha and file list
//	                                                  (size, blobId, lfs.sha256)
//	GET /{repo}/resolve/{commit}/{path}                a file (redirects to a CDN)
//
// with Authorization: Bearer HF_TOKEN (or the token file at HF_TOKEN_PATH,
// else $HF_HOME/token) for private and gated repositories. Only the files a
// model needs are fetched: a Splash package's splash.json and the files it
// lists, or a checkpoint's config.json, safetensors weights (the shards of
// model.safetensors.index.json when present), tokenizer.json,
// tokenizer_config.json and generation_config.json. Each file downloads into
// blobs/<name>.incomplete; an interrupted download resumes with a Range
// request; LFS files are checked against the sha256 the hub reports and every
// file against its size before the blob is renamed into place and linked.
//
// Errors wrap a sentinel naming the cause (ErrRepoNotFound, ErrUnauthorized,
// ErrChecksum, ErrDiskFull, ErrUnsupported, ErrNotCached...) for errors.Is.
// Before downloading, the space the missing blobs need is checked against
// the free space of the cache's disk. Each blob downloads under a file lock
// at .locks/models--owner--repo/<blob>.lock (where huggingface_hub puts its
// locks), so processes resolving one model at once do not interfere.
//
// The HTTP client is Options.Client (a Doer), so tests serve a fake hub
// from httptest; nothing here reaches the network unless asked to resolve a
// repository that is not cached.
package hub
