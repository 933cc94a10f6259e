package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agcore/agcore/toolsys"
)

// Metadata keys of a Result mapped from an MCP reply.
const (
	// MetaImages holds the image parts: a list of {"mime_type", "data"
	// (base64)}.
	MetaImages = "mcp_images"
	// MetaAudio holds the audio parts, shaped like MetaImages.
	MetaAudio = "mcp_audio"
	// MetaResources holds the embedded resources: a list of {"uri",
	// "mime_type", "text"} or {"uri", "mime_type", "blob" (base64)}.
	MetaResources = "mcp_resources"
	// MetaResourceLinks holds the resource links: a list of {"uri", "name",
	// "mime_type", "description"}.
	MetaResourceLinks = "mcp_resource_links"
	// MetaStructured holds the reply's structuredContent as decoded JSON.
	MetaStructured = "mcp_structured_content"
)

// ResultFromMCP maps an MCP tool reply to a toolsys.Result. Content is the
// text parts joined with "\n"; when there is none it is the structured
// content as JSON, and failing that a short description of the other parts,
// so the model always reads something. Images, audio, embedded resources,
// resource links and structured content go to Metadata under the Meta*
// keys. IsError is the reply's isError, whether or not text came with it.
// A nil reply is an IsError result.
func ResultFromMCP(r *sdk.CallToolResult) toolsys.Result {
	if r == nil {
		return toolsys.ErrorResult("the server returned no result")
	}
	var (
		texts []string
		other []string
		md    = map[string]any{}
	)
	add := func(key string, v map[string]any) {
		list, _ := md[key].([]map[string]any)
		md[key] = append(list, v)
	}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			texts = append(texts, c.Text)
		case *sdk.ImageContent:
			add(MetaImages, map[string]any{"mime_type": c.MIMEType, "data": base64.StdEncoding.EncodeToString(c.Data)})
			other = append(other, fmt.Sprintf("[image %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.AudioContent:
			add(MetaAudio, map[string]any{"mime_type": c.MIMEType, "data": base64.StdEncoding.EncodeToString(c.Data)})
			other = append(other, fmt.Sprintf("[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			v := map[string]any{"uri": c.Resource.URI, "mime_type": c.Resource.MIMEType}
			if c.Resource.Blob != nil {
				v["blob"] = base64.StdEncoding.EncodeToString(c.Resource.Blob)
			} else {
				v["text"] = c.Resource.Text
			}
			add(MetaResources, v)
			other = append(other, fmt.Sprintf("[resource %s]", c.Resource.URI))
		case *sdk.ResourceLink:
			add(MetaResourceLinks, map[string]any{"uri": c.URI, "name": c.Name, "mime_type": c.MIMEType, "description": c.Description})
			other = append(other, fmt.Sprintf("[resource link %s]", c.URI))
		}
	}
	var structured string
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			structured = string(b)
			var v any
			if json.Unmarshal(b, &v) == nil {
				md[MetaStructured] = v
			}
		}
	}
	res := toolsys.Result{IsError: r.IsError}
	joined := strings.Join(texts, "\n")
	switch {
	case strings.TrimSpace(joined) != "":
		res.Content = joined
	case structured != "":
		res.Content = structured
	case len(other) > 0:
		res.Content = strings.Join(other, "\n")
	case r.IsError:
		res.Content = "the tool reported an error without a message"
	}
	if len(md) > 0 {
		res.Metadata = md
	}
	return res
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown type"
	}
	return s
}
