package hwtree

import (
	"fmt"
	"strings"
	"testing"

	"github.com/barriertune/barriertune/internal/text"
)

// maxErrLen is the longest error a hostile input may give: the values it
// quotes are elided to text.MaxValue bytes each.
const maxErrLen = 4*text.MaxValue + 400

// TestHugeInputsElided gives each reader an input of hundreds of KB that
// it refuses: the error names the problem but quotes the input elided.
func TestHugeInputsElided(t *testing.T) {
	words := make([]string, 300_000)
	for i := range words {
		words[i] = "0x00000001"
	}
	xmlHugeMask := `<topology version="2.0"><object type="Machine" os_index="0" complete_cpuset="` + strings.Join(words, ",") +
		`"><object type="PU" os_index="0" cpuset="0x1"/></object></topology>`
	for _, c := range []struct {
		name string
		read func() error
		want string
	}{
		{"synthetic 100 KB", func() error { _, err := FromSynthetic(strings.Repeat("core:2x", 15_000)); return err }, "bytes) … "},
		{"synthetic unknown type of 100 KB", func() error { _, err := FromSynthetic(strings.Repeat("y", 100_000) + ":2"); return err }, "unknown type"},
		{"60,000 nested parentheses", func() error {
			_, err := FromSynthetic("core:2" + strings.Repeat("(", 60_000) + " pu:2")
			return err
		}, "unbalanced '('"},
		{"XML cpuset of 300,000 words", func() error {
			_, err := fromXML([]byte(xmlHugeMask), "huge.xml")
			return err
		}, "300000 words"},
		{"XML os_index of 100 KB", func() error {
			_, err := fromXML([]byte(`<topology><object type="Machine"><object type="PU" os_index="`+strings.Repeat("9", 100_000)+`"/></object></topology>`), "x.xml")
			return err
		}, "os_index"},
	} {
		err := c.read()
		switch {
		case err == nil:
			t.Errorf("%s: accepted", c.name)
		case len(err.Error()) > maxErrLen || strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: a %d-byte error: %s", c.name, len(err.Error()), text.Elide(err.Error(), 600))
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %q lacks %q", c.name, err, c.want)
		}
	}
}

// flatXML is a Machine holding n PUs, one per line.
func flatXML(n int) []byte {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\" os_index=\"0\">\n")
	for i := range n {
		fmt.Fprintf(&b, "<object type=\"PU\" os_index=\"%d\" cpuset=\"0x1\"/>\n", i)
	}
	b.WriteString("</object>\n</topology>\n")
	return []byte(b.String())
}

// TestXMLCapsWhileStreaming checks that an XML file over a cap is refused
// at the first object over it: the error's line is the cap's, not the
// file's end.
func TestXMLCapsWhileStreaming(t *testing.T) {
	n := 80_000
	if fullTests && !testing.Short() {
		n = 600_000 // the 600,000-PU file (-tags fulltests, .ci/run)
	}
	_, err := fromXML(flatXML(n), "many.xml")
	want := fmt.Sprintf("more than 65536 PU objects (line %d)", 3+65537)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%d PUs: error %v, want %q", n, err, want)
	}
	deep := strings.Repeat(`<object type="Group">`, maxXMLDepth+10)
	_, err = fromXML([]byte(`<topology><object type="Machine">`+deep), "deep.xml")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("nested more than %d deep", maxXMLDepth)) {
		t.Errorf("deep XML: %v", err)
	}
	if testing.Short() || !fullTests {
		return // the object cap's file is built and refused under -tags fulltests
	}
	var b strings.Builder
	b.WriteString(`<topology><object type="Machine"><object type="PU" os_index="0"/>`)
	for range maxXMLObjects {
		b.WriteString(`<object type="Misc"/>`)
	}
	b.WriteString(`</object></topology>`)
	_, err = fromXML([]byte(b.String()), "misc.xml")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d objects", maxXMLObjects)) {
		t.Errorf("%d Misc objects: %v", maxXMLObjects, err)
	}
}

// BenchmarkXMLRefuse600kPUs times the refusal of a 50 MB file of 600,000
// PUs (formerly over 10 s before streaming caps).
func BenchmarkXMLRefuse600kPUs(b *testing.B) {
	data := flatXML(600_000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := fromXML(data, "many.xml"); err == nil {
			b.Fatal("accepted")
		}
	}
}

// BenchmarkXMLFlat65536PUs times the largest flat file accepted: a Machine
// holding the cap's 65,536 PUs (4.1 s here before sets were built in
// place, 2.2 s after; the dense sets of PUs with high indexes remain).
func BenchmarkXMLFlat65536PUs(b *testing.B) {
	data := flatXML(65536)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := fromXML(data, "flat.xml"); err != nil {
			b.Fatal(err)
		}
	}
}
