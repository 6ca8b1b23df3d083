package celeba

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// AttributeTable holds the binary attributes of list_attr_celeba.txt.
type AttributeTable struct {
	// Names lists the attributes in file order (40 for CelebA, from
	// "5_o_Clock_Shadow" to "Young").
	Names []string
	// Files lists the images in file order.
	Files []string
	// Values[i][a] is +1 if image Files[i] has attribute Names[a], -1 if not.
	Values [][]int8

	attr map[string]int // index of each attribute name
	file map[string]int // index of each image name
}

// Attributes reads list_attr_celeba.txt from root: a first line holding the
// number of images, a second holding the attribute names, then one line per
// image with its name and one value, 1 or -1, per attribute. Errors name the
// file and the line at fault.
func Attributes(root string) (*AttributeTable, error) {
	path := filepath.Join(root, AttributeFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("celeba: attribute file %s is missing: it comes with CelebA "+
			"(Anno/list_attr_celeba.txt)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("celeba: %w", err)
	}
	defer f.Close()

	t := &AttributeTable{attr: make(map[string]int), file: make(map[string]int)}
	sc := bufio.NewScanner(f)
	count := -1
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		switch {
		case line == 1:
			n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("celeba: %s line 1: %q, want the number of images", path, sc.Text())
			}
			count = n
		case line == 2:
			if len(fields) == 0 {
				return nil, fmt.Errorf("celeba: %s line 2: no attribute names", path)
			}
			for a, name := range fields {
				if _, dup := t.attr[name]; dup {
					return nil, fmt.Errorf("celeba: %s line 2: attribute %s named twice", path, name)
				}
				t.attr[name] = a
			}
			t.Names = fields
		case len(fields) == 0:
			continue
		default:
			if err := t.addRow(fields); err != nil {
				return nil, fmt.Errorf("celeba: %s line %d: %w", path, line, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("celeba: reading %s: %w", path, err)
	}
	if line < 2 {
		return nil, fmt.Errorf("celeba: %s has %d lines, want a count line and an attribute-name line first",
			path, line)
	}
	if len(t.Files) != count {
		return nil, fmt.Errorf("celeba: %s lists %d images, but its first line announces %d",
			path, len(t.Files), count)
	}
	return t, nil
}

// addRow parses the fields of one image line.
func (t *AttributeTable) addRow(fields []string) error {
	if len(fields) != 1+len(t.Names) {
		return fmt.Errorf("%d fields, want 1 + %d (image name and one value per attribute)",
			len(fields), len(t.Names))
	}
	name := fields[0]
	if err := checkImageName(name); err != nil {
		return err
	}
	if _, dup := t.file[name]; dup {
		return fmt.Errorf("image %s listed twice", name)
	}
	row := make([]int8, len(t.Names))
	for a, v := range fields[1:] {
		switch v {
		case "1":
			row[a] = 1
		case "-1":
			row[a] = -1
		default:
			return fmt.Errorf("value %q of attribute %s, want 1 or -1", v, t.Names[a])
		}
	}
	t.file[name] = len(t.Files)
	t.Files = append(t.Files, name)
	t.Values = append(t.Values, row)
	return nil
}

// Value returns +1 if image file has attribute attr and -1 if not.
func (t *AttributeTable) Value(file, attr string) (int8, error) {
	a, ok := t.attr[attr]
	if !ok {
		return 0, fmt.Errorf("celeba: no attribute %q in %s", attr, AttributeFile)
	}
	i, ok := t.file[file]
	if !ok {
		return 0, fmt.Errorf("celeba: no image %s in %s", file, AttributeFile)
	}
	return t.Values[i][a], nil
}

// Select splits files (for instance SplitFiles' result, to index the set
// Load returns) by attribute attr: with holds the indices into files of the
// images that have it, without those of the images that do not, both in
// increasing order. The mean latent codes of the two groups give the
// attribute direction z_with − z_without of attribute-manipulation
// experiments. It errors on an unknown attribute or an image the table lacks.
func (t *AttributeTable) Select(files []string, attr string) (with, without []int, err error) {
	for i, file := range files {
		v, err := t.Value(file, attr)
		if err != nil {
			return nil, nil, err
		}
		if v > 0 {
			with = append(with, i)
		} else {
			without = append(without, i)
		}
	}
	return with, without, nil
}
