package config

import "testing"

func TestCheckOrigins(t *testing.T) {
	for _, o := range []string{"app.example.com", "https://app.example.com/path", "ftp://x", "https://u@x", "https://x?a=1"} {
		if err := CheckOrigins([]string{o}); err == nil {
			t.Errorf("EDGE_CORS_ORIGINS=%q accepted", o)
		}
	}
	if err := CheckOrigins([]string{"*", " https://app.example.com", "http://localhost:3000", ""}); err != nil {
		t.Errorf("valid origins refused: %v", err)
	}
}
