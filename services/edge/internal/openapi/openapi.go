// Package openapi embeds the OpenAPI 3.1 document of the public API, served at /openapi.json.
package openapi

import _ "embed"

// Document is the OpenAPI document, JSON.
//
//go:embed openapi.json
var Document []byte
