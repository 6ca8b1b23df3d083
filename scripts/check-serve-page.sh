#!/usr/bin/env bash
# Opens the scoring service's page in headless Chromium (Debian's chromium,
# driven by puppeteer-core from npm, installed into a cache folder on first
# use) as a person would: types the token, uploads images, presses Score,
# and fails unless the table lists every image with the score the API
# gives it and every picture (originals, reconstructions, samples) loads;
# then saves a screenshot. For a train-table run it uploads one CSV file
# instead (at most 64 rows: one request; a row with a category training
# never saw is kept, as the page keeps it: ?unseen=anomalous) and checks
# each row's line, p-value and energy against the API's, then the
# samples' text.
#
#   scripts/check-serve-page.sh RUN IMAGE... [-- SCREENSHOT.png]
#   scripts/check-serve-page.sh TABLE_RUN ROWS.csv [-- SCREENSHOT.png]
#
# RUN is a train-lebm run folder; the service is started on a free
# loopback port with a token and stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:?usage: check-serve-page.sh RUN IMAGE... [-- SCREENSHOT.png]}
shift
images=()
shot=docs/results/serving/page.png
[ -f "$run/table.json" ] && shot=docs/results/serving/page-table.png
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shot=$2; break; fi
  images+=("$(realpath "$1")")
  shift
done
[ ${#images[@]} -gt 0 ] || { echo "check-serve-page: no images given" >&2; exit 1; }
command -v chromium >/dev/null || { echo "chromium not found: apt-get install chromium" >&2; exit 1; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/edlebm-page-check
if [ ! -d "$cache/node_modules/puppeteer-core" ]; then
  mkdir -p "$cache"
  (cd "$cache" && npm init -y >/dev/null && npm install --no-audit --no-fund puppeteer-core@25.16.0 >/dev/null)
fi
work=$(mktemp -d)
bin=$work/serve
go build -o "$bin" ./cmd/serve
token=page-check-$RANDOM$RANDOM
printf '%s\n' "$token" >"$work/token"
port=$((20000 + RANDOM % 20000))
"$bin" -run "$run" -listen "127.0.0.1:$port" -token-file "$work/token" -samples 16 >"$work/serve.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 300); do
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || { echo "check-serve-page: not ready" >&2; exit 1; }
if [ -f "$run/table.json" ]; then
  curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: text/csv' --data-binary "@${images[0]}" "http://127.0.0.1:$port/v1/score?unseen=anomalous" >"$work/api.json"
else
  form=()
  for f in "${images[@]}"; do form+=(-F "image=@$f"); done
  curl -sf -H "Authorization: Bearer $token" "${form[@]}" "http://127.0.0.1:$port/v1/score" >"$work/api.json"
fi
mkdir -p "$(dirname "$shot")"
cat >"$work/check.cjs" <<'JS'
const puppeteer = require(process.env.CACHE + "/node_modules/puppeteer-core");
const fs = require("fs");
(async () => {
  const [url, token, shot, apiFile, ...files] = process.argv.slice(2);
  const answer = JSON.parse(fs.readFileSync(apiFile, "utf8")), api = answer.images;
  const browser = await puppeteer.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 1400 });
    await page.goto(url, { waitUntil: "networkidle0" });
    await page.type("#token", token);
    await page.$eval("#token", e => e.dispatchEvent(new Event("change")));
    await page.waitForFunction(() => document.getElementById("info").textContent.startsWith("Run /"), { timeout: 10000 });
    await (await page.$("#files")).uploadFile(...files);
    await page.click("button[type=submit]");
    if (answer.rows) return await checkTable(page, answer.rows, shot);
    console.error("check-serve-page: scoring " + files.length + " images");
    await page.waitForFunction(() => !document.getElementById("results").hidden || document.getElementById("error").textContent, { timeout: 120000 });
    const error = await page.$eval("#error", e => e.textContent);
    if (error) throw new Error("the page says: " + error);
    console.error("check-serve-page: scored; generating samples");
    await page.click("#show-samples");
    await page.waitForFunction(() => { const i = document.getElementById("samples"); return (!i.hidden && i.complete && i.naturalWidth > 0) || document.getElementById("error").textContent; }, { timeout: 300000 });
    const samplesError = await page.$eval("#error", e => e.textContent);
    if (samplesError) throw new Error("the page says: " + samplesError);
    await page.waitForFunction(() => [...document.images].every(i => i.hidden || (i.complete && i.naturalWidth > 0)), { timeout: 30000 });
    const rows = await page.$$eval("#results tbody tr", trs => trs.map(tr => ({ file: tr.cells[2].textContent, score: tr.cells[3].textContent })));
    const want = api.slice().sort((a, b) => b.score - a.score).map(a => ({ file: a.file, score: a.score.toFixed(2) }));
    if (JSON.stringify(rows) !== JSON.stringify(want)) throw new Error("the table " + JSON.stringify(rows) + " is not the API's " + JSON.stringify(want));
    const pictures = await page.$$eval("img", is => is.filter(i => !i.hidden).length);
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`check-serve-page: ${rows.length} images scored as the API scores them, ${pictures} pictures loaded; screenshot ${shot}`);
  } finally {
    await browser.close();
  }
})().catch(e => { console.error("check-serve-page: " + e.message); process.exit(1); });

// checkTable: the page lists the rows by energy, highest first, each with
// its line in the file, p-value and energy as the API answered them.
async function checkTable(page, api, shot) {
  await page.waitForFunction(() => !document.getElementById("results").hidden || document.getElementById("error").textContent, { timeout: 120000 });
  const error = await page.$eval("#error", e => e.textContent);
  if (error) throw new Error("the page says: " + error);
  const rows = await page.$$eval("#results tbody tr", trs => trs.map(tr => [1, 2, 3].map(i => tr.cells[i].textContent).join(" ")));
  const energy = r => r.energy === null ? Infinity : r.energy;
  const want = api.map((r, i) => ({ line: i + 2, r: r })).sort((a, b) => energy(b.r) > energy(a.r) ? 1 : energy(b.r) < energy(a.r) ? -1 : 0)
    .map(a => [a.line, a.r.p_value.toFixed(4), a.r.energy === null ? "∞" : a.r.energy.toFixed(3)].join(" "));
  if (JSON.stringify(rows) !== JSON.stringify(want)) throw new Error("the table " + JSON.stringify(rows) + " is not the API's " + JSON.stringify(want));
  await page.click("#show-samples");
  await page.waitForFunction(() => !document.getElementById("samples-text").hidden || document.getElementById("error").textContent, { timeout: 30000 });
  const samplesError = await page.$eval("#error", e => e.textContent);
  if (samplesError) throw new Error("the page says: " + samplesError);
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`check-serve-page: ${rows.length} rows listed as the API scores them, samples shown; screenshot ${shot}`);
}
JS
CACHE=$cache node "$work/check.cjs" "http://127.0.0.1:$port/" "$token" "$(realpath -m "$shot")" "$work/api.json" "${images[@]}"
