"""Writes the fixture of TestLoadScipyFixture, scipy/chardata.mat, with
scipy.io.savemat (a MAT-file writer independent of the Go reader and of the
tests' own writer, internal/matwrite), in the layout of Burda et al.'s
chardata.mat: data (784×3) and testdata (784×2) doubles in [0, 1], one image
per column, target and testtarget one-hot alphabets (5×N), and targetchar,
which Load ignores.

Beside them it stores expected_train and expected_test (N×784): the images
as the published code hands them to its models, computed here with that
code's own steps (VampPrior's utils/load_data.py, load_omniglot, and its copy
in GWG_release's vamp_utils.py): reshape_data(omni_raw['data'].T), each row
a row-major 28×28 image. The Go test checks that Load returns exactly those
images (scaled to [-1, 1]), so Load's orientation is checked against numpy's
reading of the published code rather than against the Go code's own
derivation.

Run from this directory with Debian's python3-scipy: /usr/bin/python3 scipy_fixture.py
"""
import os

import numpy as np
import scipy.io


def reshape_data(data):
    # As in VampPrior's and GWG's load_omniglot.
    return data.reshape((-1, 28, 28)).reshape((-1, 28 * 28), order='F')


def image(n):
    """An asymmetric 28×28 test image in [0, 1] (rows != columns), upright
    in the sense that row 0 is the top: an 'F' of 1s on a grey ramp."""
    r, c = np.mgrid[0:28, 0:28]
    img = ((n * 7 + r * 3 + c * 5) % 17) / 32.0  # grey ramp in [0, 0.5]
    img[4:24, 6 + n] = 1.0   # the F's stem
    img[4, 6 + n:20] = 1.0   # its top bar
    img[12, 6 + n:15] = 1.0  # its middle bar
    return img


def column(img):
    # The file's column for an image: MATLAB's img(:), column-major.
    return img.flatten(order='F')


train = np.stack([column(image(n)) for n in range(3)], axis=1)
test = np.stack([column(image(n)) for n in range(3, 5)], axis=1)
target = np.zeros((5, 3))
target[[3, 0, 4], [0, 1, 2]] = 1
testtarget = np.zeros((5, 2))
testtarget[[1, 2], [0, 1]] = 1

expected_train = reshape_data(train.T)
expected_test = reshape_data(test.T)
# The published reading shows the images upright, as drawn by image().
for n in range(3):
    assert (expected_train[n].reshape(28, 28) == image(n)).all()
for n in range(2):
    assert (expected_test[n].reshape(28, 28) == image(3 + n)).all()

os.makedirs('scipy', exist_ok=True)
scipy.io.savemat(os.path.join('scipy', 'chardata.mat'), {
    'data': train, 'testdata': test, 'target': target, 'testtarget': testtarget,
    'targetchar': np.array([[1.0, 2.0, 3.0]]),
    'expected_train': expected_train, 'expected_test': expected_test,
}, do_compression=True)
