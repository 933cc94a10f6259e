package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
)

// consoleFS holds the web console: plain HTML, CSS and an ES module, with
// no build step.
//
//go:embed console
var consoleFS embed.FS

// consoleCSP confines the console's pages to their own assets and the
// API: no inline script, no other origin, no framing.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// consoleRoutes serves the console at / and its assets under /console/.
// The pages hold no data: they are served without the token (the sign-in
// form asks for it), and every call they make to the API carries it.
func (s *Server) consoleRoutes(m *http.ServeMux) {
	files, _ := fs.Sub(consoleFS, "console") // the directory is embedded: Sub cannot fail
	s.public["/"] = true
	entries, _ := fs.ReadDir(files, ".")
	for _, e := range entries {
		s.public["/console/"+e.Name()] = true
	}
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { serveConsoleFile(w, r, files, "index.html") })
	m.HandleFunc("GET /console/{file}", func(w http.ResponseWriter, r *http.Request) {
		serveConsoleFile(w, r, files, r.PathValue("file"))
	})
}

var consoleTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
}

func serveConsoleFile(w http.ResponseWriter, r *http.Request, files fs.FS, name string) {
	typ, ok := consoleTypes[path.Ext(name)]
	b, err := fs.ReadFile(files, name)
	if !ok || err != nil {
		writeError(w, apiErr(http.StatusNotFound, CodeNotFound, "no console file %q", name))
		return
	}
	h := w.Header()
	h.Set("Content-Type", typ)
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
