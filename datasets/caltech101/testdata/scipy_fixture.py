"""Writes the fixture of TestLoadScipyFixture,
scipy/caltech101_silhouettes_28_split1.mat, with scipy.io.savemat (a MAT-file
writer independent of the Go reader and of the tests' own writer,
internal/matwrite), in the layout of Marlin's file: train_data (3×784),
val_data (2×784) and test_data (1×784) of 0s and 1s, one image per row, the
class numbers train_labels, val_labels and test_labels (N×1, 1 to 101), and
classnames, a cell array Load ignores.

Beside them it stores expected_train, expected_val and expected_test (N×784):
the images as the published code hands them to its models, computed here
with that code's own steps (VampPrior's utils/load_data.py,
load_caltech101silhouettes, and its copy in GWG_release's vamp_utils.py, less
the shuffling): 1 - reshape_data(caltech_raw['train_data']), each row a
row-major 28×28 image. The Go test checks that Load returns exactly those
images (scaled to [-1, 1]).

Run from this directory with Debian's python3-scipy: /usr/bin/python3 scipy_fixture.py
"""
import os

import numpy as np
import scipy.io


def reshape_data(data):
    # As in VampPrior's and GWG's load_caltech101silhouettes.
    return data.reshape((-1, 28, 28)).reshape((-1, 28 * 28), order='F')


def silhouette(n):
    """An asymmetric 28×28 silhouette, 1 inside (row 0 is the top): a
    right triangle whose right angle is at the bottom left, shifted by n."""
    r, c = np.mgrid[0:28, 0:28]
    return ((c - n >= 2) & (r <= 25) & (r - 2 >= c - n)).astype(np.float64)


def row(img):
    # The file's row for a silhouette: black (0) on white (1), column-major.
    return (1 - img).flatten(order='F')


splits = {'train': [0, 1, 2], 'val': [3, 4], 'test': [5]}
labels = {'train': [1, 101, 17], 'val': [50, 2], 'test': [7]}
variables = {'classnames': np.array([['accordion', 'airplanes']], dtype=object)}
for split, images in splits.items():
    data = np.stack([row(silhouette(n)) for n in images])
    expected = 1. - reshape_data(data.astype('float32'))
    # The published reading shows the silhouettes upright and as 1s.
    for i, n in enumerate(images):
        assert (expected[i].reshape(28, 28) == silhouette(n)).all()
    variables[split + '_data'] = data
    variables[split + '_labels'] = np.array(labels[split], dtype=np.float64).reshape(-1, 1)
    variables['expected_' + split] = expected.astype(np.float64)

os.makedirs('scipy', exist_ok=True)
scipy.io.savemat(os.path.join('scipy', 'caltech101_silhouettes_28_split1.mat'), variables, do_compression=True)
