package engine

import (
	"container/list"
	"fmt"

	"github.com/splash-inference/splash/model"
)

// ImageTower encodes one still image's patches: model.VisionTower.
type ImageTower interface {
	Config() *model.VisionConfig
	Encode(patches []float32, gridH, gridW int) ([]float32, error)
}

// ImageCache holds images' embeddings by content hash (Image.Hash), least
// recently used first out once they exceed a byte budget, so an image
// resent (a screenshot in a conversation sent again) does not run the
// tower again. It is not safe for concurrent use: its owner runs the
// model.
type ImageCache struct {
	tower    ImageTower
	maxBytes int64
	bytes    int64
	lru      *list.List // of *imageEntry, most recent at the front
	byHash   map[[32]byte]*list.Element
	hits     int64
	encoded  int64
}

type imageEntry struct {
	hash   [32]byte
	embeds []float32
}

// NewImageCache returns a cache over tower keeping at most maxBytes of
// embeddings (an image larger than that is encoded every time).
func NewImageCache(tower ImageTower, maxBytes int64) *ImageCache {
	return &ImageCache{tower: tower, maxBytes: maxBytes, lru: list.New(), byHash: map[[32]byte]*list.Element{}}
}

// Tower returns the tower the cache encodes with.
func (c *ImageCache) Tower() ImageTower { return c.tower }

// Embeddings returns im's embeddings: its own Embeds, the cached ones of
// its hash, or the tower's encoding of its patches, which the cache then
// keeps. The result is shared: read-only.
func (c *ImageCache) Embeddings(im *Image) ([]float32, error) {
	if im.Embeds != nil {
		return im.Embeds, nil
	}
	if e, ok := c.byHash[im.Hash]; ok {
		c.lru.MoveToFront(e)
		c.hits++
		return e.Value.(*imageEntry).embeds, nil
	}
	v := c.tower.Config()
	if im.GridT != 1 {
		return nil, fmt.Errorf("engine: image of %d frames: only still images (grid_t 1) are supported", im.GridT)
	}
	m := v.SpatialMergeSize
	embeds, err := c.tower.Encode(im.Patches, im.GridH*m, im.GridW*m)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	c.encoded++
	if size := 4 * int64(len(embeds)); size <= c.maxBytes {
		for c.bytes+size > c.maxBytes {
			c.evictOldest()
		}
		c.byHash[im.Hash] = c.lru.PushFront(&imageEntry{hash: im.Hash, embeds: embeds})
		c.bytes += size
	}
	return embeds, nil
}

func (c *ImageCache) evictOldest() {
	e := c.lru.Back()
	ent := c.lru.Remove(e).(*imageEntry)
	delete(c.byHash, ent.hash)
	c.bytes -= 4 * int64(len(ent.embeds))
}

// ImageCacheStats counts what an ImageCache did.
type ImageCacheStats struct {
	Hits    int64 // images served from the cache
	Encoded int64 // images the tower encoded
	Images  int   // images held now
	Bytes   int64 // their embeddings' bytes
}

// Stats returns the cache's counters.
func (c *ImageCache) Stats() ImageCacheStats {
	return ImageCacheStats{Hits: c.hits, Encoded: c.encoded, Images: c.lru.Len(), Bytes: c.bytes}
}
