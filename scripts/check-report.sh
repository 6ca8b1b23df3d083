#!/usr/bin/env bash
# Opens a run's report.html in headless Chromium (Debian's chromium) as a
# person would, from the file system, and fails unless every picture it
# links loads (a page of the script's own frames the report and reads each
# image's decoded size, since headless Chromium does not log failed loads);
# then saves a screenshot of the report.
#
#   scripts/check-report.sh RUN [SCREENSHOT.png]
set -euo pipefail
run=${1:?usage: check-report.sh RUN [SCREENSHOT.png]}
shot=${2:-$run/report-screenshot.png}
command -v chromium >/dev/null || { echo "chromium not found: apt-get install chromium" >&2; exit 1; }
page=$(realpath "$run/report.html")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/check.html" <<HTML
<!DOCTYPE html><html><body>
<iframe id="f" src="file://$page" style="width:1280px;height:2400px"></iframe>
<script>
document.getElementById("f").onload = function () {
  var imgs = this.contentDocument.images, bad = [];
  for (var i = 0; i < imgs.length; i++) {
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) bad.push(imgs[i].getAttribute("src"));
  }
  var p = document.createElement("pre");
  p.id = "result";
  p.textContent = bad.length ? "BROKEN " + bad.join(" ") : "LOADED " + imgs.length + " pictures";
  document.body.appendChild(p);
};
</script></body></html>
HTML
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files)
result=$(chromium "${flags[@]}" --virtual-time-budget=10000 --dump-dom "file://$work/check.html" 2>/dev/null |
  grep -o '<pre id="result">[^<]*' | sed 's/<pre id="result">//' || true)
case $result in
  "LOADED "*) ;;
  *) echo "check-report: $page: ${result:-the page did not load}" >&2; exit 1 ;;
esac
chromium "${flags[@]}" --window-size=1280,2400 --screenshot="$(realpath -m "$shot")" "file://$page" >/dev/null 2>&1
[ -s "$shot" ] || { echo "check-report: no screenshot written" >&2; exit 1; }
echo "check-report: $page: $result; screenshot $shot"
