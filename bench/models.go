package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// DiscoverModel asks the server which models it serves (GET /v1/models, which
// OpenAI-compatible servers and Anthropic's API both offer) and returns the
// first, so --model can be left out against a server with one model loaded.
func DiscoverModel(ctx context.Context, baseURL, apiKey string) (string, error) {
	base := strings.TrimRight(baseURL, "/")
	if !strings.HasSuffix(base, "/v1") {
		base += "/v1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
		req.Header.Set("x-api-key", apiKey)
	}
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("bench: listing models: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("bench: listing models: HTTP %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", fmt.Errorf("bench: listing models: %w", err)
	}
	if len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", fmt.Errorf("bench: the server lists no models; pass --model")
	}
	return list.Data[0].ID, nil
}
