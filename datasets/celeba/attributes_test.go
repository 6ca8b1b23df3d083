package celeba

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAttributes(t *testing.T) {
	root := newFixture(t, false)
	table, err := Attributes(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(table.Names, attrNames) {
		t.Errorf("Names = %v, want %v", table.Names, attrNames)
	}
	if len(table.Files) != len(fixture) || len(table.Values) != len(fixture) {
		t.Fatalf("%d files and %d value rows, want %d", len(table.Files), len(table.Values), len(fixture))
	}
	for i, im := range fixture {
		if table.Files[i] != im.file {
			t.Errorf("Files[%d] = %s, want %s", i, table.Files[i], im.file)
		}
		for a, name := range attrNames {
			if table.Values[i][a] != attrValue(i, a) {
				t.Errorf("Values[%d][%d] = %d, want %d", i, a, table.Values[i][a], attrValue(i, a))
			}
			if v, err := table.Value(im.file, name); err != nil || v != attrValue(i, a) {
				t.Errorf("Value(%s, %s) = %d, %v; want %d", im.file, name, v, err, attrValue(i, a))
			}
		}
	}
}

func TestSelect(t *testing.T) {
	root := newFixture(t, false)
	table, err := Attributes(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := SplitFiles(root, Options{Size: 64, Split: "train", Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Train images are fixture images 0…4; attribute a is set where
	// (i + a) mod 3 = 0: "Male" (20) for i = 1, 4; "Smiling" (31) for i = 2.
	tests := []struct {
		attr          string
		with, without []int
	}{
		{"Male", []int{1, 4}, []int{0, 2, 3}},
		{"Smiling", []int{2}, []int{0, 1, 3, 4}},
		{"Attr00", []int{0, 3}, []int{1, 2, 4}},
	}
	for _, tc := range tests {
		with, without, err := table.Select(files, tc.attr)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(with, tc.with) || !slices.Equal(without, tc.without) {
			t.Errorf("Select(%s) = %v, %v; want %v, %v", tc.attr, with, without, tc.with, tc.without)
		}
	}
	if _, _, err := table.Select(files, "Bald_Eagle"); err == nil || !strings.Contains(err.Error(), `no attribute "Bald_Eagle"`) {
		t.Errorf("Select of an unknown attribute: error %v", err)
	}
	if _, _, err := table.Select([]string{"000001.jpg", "999999.jpg"}, "Male"); err == nil || !strings.Contains(err.Error(), "no image 999999.jpg") {
		t.Errorf("Select of an unknown image: error %v", err)
	}
}

func TestAttributesErrors(t *testing.T) {
	tests := []struct {
		name    string
		modify  func(text string) string
		wantErr string
	}{
		{"bad count", func(s string) string { return strings.Replace(s, "9\n", "nine\n", 1) }, `line 1: "nine"`},
		{"negative count", func(s string) string { return strings.Replace(s, "9\n", "-1\n", 1) }, `line 1: "-1"`},
		{"count mismatch", func(s string) string { return strings.Replace(s, "9\n", "10\n", 1) },
			"lists 9 images, but its first line announces 10"},
		{"duplicate attribute", func(s string) string { return strings.Replace(s, "Attr05", "Male", 1) },
			"line 2: attribute Male named twice"},
		{"missing value", func(s string) string { return strings.Replace(s, "000004.jpg  1", "000004.jpg", 1) },
			"line 6: 40 fields, want 1 + 40"},
		{"bad value", func(s string) string { return strings.Replace(s, "000002.jpg -1", "000002.jpg  0", 1) },
			`line 4: value "0" of attribute Attr00`},
		{"duplicate image", func(s string) string { return strings.Replace(s, "000009.jpg", "000001.jpg", 1) },
			"line 11: image 000001.jpg listed twice"},
		{"header only", func(s string) string { return s[:strings.Index(s, "\n")+1] }, "has 1 lines"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, AttributeFile), []byte(tc.modify(attributeText())))
			_, err := Attributes(root)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), AttributeFile) {
				t.Errorf("error %q, want it to name %s and contain %q", err, AttributeFile, tc.wantErr)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		root := t.TempDir()
		if _, err := os.Stat(filepath.Join(root, AttributeFile)); err == nil {
			t.Fatal("fixture folder unexpectedly holds the attribute file")
		}
		if _, err := Attributes(root); err == nil || !strings.Contains(err.Error(), "is missing") {
			t.Errorf("error %v, want one saying %s is missing", err, AttributeFile)
		}
	})
}

// TestAttributesNoImages checks that a file announcing zero images and
// holding only its two header lines is a valid, empty table.
func TestAttributesNoImages(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, AttributeFile), []byte("0\nMale Smiling\n"))
	table, err := Attributes(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(table.Names, []string{"Male", "Smiling"}) || len(table.Files) != 0 || len(table.Values) != 0 {
		t.Errorf("table with names %v, %d files and %d rows; want [Male Smiling] and none", table.Names, len(table.Files), len(table.Values))
	}
}
