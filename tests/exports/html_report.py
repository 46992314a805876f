#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""compare --format html (docs/exports.md#html) on the report fixtures of
reports/testdata/.

    html_report.py SNAPBENCH TESTDATA CASE

CASE is one of
  structure  per comparison: the page's table rows are the JSON's metrics
             (those not 0 everywhere, unless --all) with their verdicts and
             the text table's cells; the details name each run with its
             kernel and hold the first run's spec as JSON; compare.html in --output is the page
             on stdout; every SVG --output writes is inline in it, byte for
             byte but its ids (prefixed to be unique); the page loads nothing (no src, no link, no script, no
             url(), no href but #fragments, http(s):// only as the SVG
             namespace). A report whose arm label, metric name and
             unavailable reason hold <script>, quotes and & comes out
             escaped: no element of its making, the text as written.
             The timeline is drawn and marks the scenario's action window:
             the snapshot of a background-snapshot run, the migration of a
             dirty-log and of a postcopy-restore run (each side's bars in
             a window-migration group, the captions and the link in
             compare.md naming it).
  chromium   headless Chromium (Debian's chromium) renders the pages: the
             DOM it builds holds the JSON's metrics as table rows, nothing
             reaches its console (checked to catch a page that throws), and
             the screenshot is not blank: many colours, the plots' own among
             them (decoded with zlib, no imaging package).

Exits 77 when chromium is not installed (scripts/install-deps installs it).
"""

import html
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exports as ex  # noqa: E402  (the fixtures' helpers: load, relabel, run, check)

check, fail, log = ex.check, ex.fail, ex.log

HOSTILE_LABEL = 'evil <script>alert("label")</script> & \'q\' \x1b[2J'
HOSTILE_LABEL_SHOWN = 'evil <script>alert("label")</script> & \'q\' ?[2J'
HOSTILE_METRIC = 'evil<script>&"q"_per_s'
HOSTILE_REASON = '<script>alert(1)</script> & "no sample"'

CASES = ex.COMPARE_CASES + [
    ("zero left out", ["--force", "perm-upgrade.json", "read64.json", "--window", "pre", "--window", "snapshot",
                       "--metric", "pf_per_s", "--metric", "tlb_per_s"]),
    ("zero, --all", ["--force", "perm-upgrade.json", "read64.json", "--window", "pre", "--all",
                     "--metric", "pf_per_s", "--metric", "tlb_per_s"]),
]

# elements and attributes that would load something, run something, or are not ours
FORBIDDEN_TAGS = {"script", "link", "img", "iframe", "frame", "object", "embed", "base", "form", "input", "audio",
                  "video", "source", "track", "use", "image", "foreignobject", "feimage", "animate", "set"}
PLOT_COLOURS = [(0x3b, 0x6f, 0xb6), (0xd9, 0x78, 0x2d)]  # reports/compare-plot.c's side colours


class Page(html.parser.HTMLParser):
    """The parts of a page the checks read: tags, attributes, table rows, text of classed elements."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs = [], []
        self.rows = []           # (window, data-metric, data-verdict, [cell texts])
        self.window = None
        self.row = None
        self.cell = None
        self.sides_text = []     # text of <p class="sides">
        self.in_sides = False
        self.notes = []          # text of <ul class="notes"> items
        self.in_notes = False
        self.pres = []           # text of each <pre>
        self.in_pre = False
        self.kernel_cells = []   # cells of <table class="kernels">
        self.in_kernels = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        self.attrs.extend((tag, k, v) for k, v in attrs)
        if tag == "table" and a.get("class") == "metrics":
            self.window = a.get("data-window")
        elif tag == "tr" and self.window is not None and "data-metric" in a:
            self.row = (self.window, a["data-metric"], a.get("data-verdict"), [])
        elif tag == "td" and self.row is not None:
            self.cell = []
        elif tag == "p" and a.get("class") == "sides":
            self.in_sides = True
        elif tag == "ul" and a.get("class") == "notes":
            self.in_notes = True
        elif tag == "pre":
            self.pres.append("")
            self.in_pre = True
        elif tag == "table" and a.get("class") == "kernels":
            self.in_kernels = True
        elif tag == "td" and self.in_kernels:
            self.kernel_cells.append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self.window = None
            self.in_kernels = False
        elif tag == "pre":
            self.in_pre = False
        elif tag == "td" and self.cell is not None:
            self.row[3].append("".join(self.cell))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None
        elif tag == "p":
            self.in_sides = False
        elif tag == "ul":
            self.in_notes = False

    def handle_data(self, data):
        if self.in_pre:
            self.pres[-1] += data
        if self.in_kernels and self.kernel_cells:
            self.kernel_cells[-1] += data
        if self.cell is not None:
            self.cell.append(data)
        if self.in_sides:
            self.sides_text.append(data)
        if self.in_notes:
            self.notes.append(data)


def all_zero(m):
    return all(m[s]["n"] and all(v == 0 for v in m[s]["values"]) for s in ("baseline", "patched"))


def expected_rows(doc, show_all):
    return [(m["window"], m["metric"], m["verdict"]) for m in doc["metrics"] if show_all or not all_zero(m)]


def check_no_loads(text, what):
    """Nothing in the page loads a resource or runs code."""
    page = Page(text)
    bad = sorted({t for t in page.tags if t.lower() in FORBIDDEN_TAGS})
    check(not bad, "%s: elements that load or run something: %s" % (what, bad))
    for tag, k, v in page.attrs:
        k = k.lower()
        check(not k.startswith("on"), "%s: an event handler attribute %s on <%s>" % (what, k, tag))
        check(k not in ("src", "srcset", "action", "formaction", "poster", "background", "xlink:href"),
              "%s: <%s %s=%r>" % (what, tag, k, v))
        check(k != "href" or (v or "").startswith("#"), "%s: <%s href=%r>: not a fragment of the page" % (what, tag, v))
    check(not re.search(r"url\s*\(|@import", text, re.I), "%s: a url() or @import in the page" % what)
    for mo in re.finditer(r"https?://", text, re.I):
        around = text[max(0, mo.start() - 7):mo.start() + 27]
        check(around == 'xmlns="http://www.w3.org/2000/svg"',
              "%s: %r: only the SVG namespace may name an http(s) URL" % (what, around))
    check(re.search(r"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';", text),
          "%s: no Content-Security-Policy forbidding loads" % what)
    return page


def inline_form(svg):
    """An SVG file of --output as the page holds it: no XML declaration."""
    return re.sub(r"\A<\?xml[^>]*\?>\n", "", svg)


def table_line(table, window, name):
    """The text table's line of metric name in window."""
    section = table.split("\nWindow %s:\n" % window, 1)[1].split("\nWindow ", 1)[0]
    for line in section.splitlines():
        if line.startswith("  " + name + "  "):
            return line
    fail("no line %r in window %s of the text table:\n%s" % (name, window, section))


def check_page(snapbench, args, tmp, what):
    doc, rc = ex.compare_doc(snapbench, None, args)
    page_text = ex.run([snapbench, "compare", "--format", "html"] + args, rc=rc).stdout
    table = ex.run([snapbench, "compare", "--wide"] + args, rc=rc).stdout  # one line per metric, full digits
    out = tempfile.mkdtemp(prefix="out-", dir=tmp)
    p = ex.run([snapbench, "compare", "--format", "html", "--output", out] + args, rc=rc)
    check(p.stdout == page_text, "%s: the page differs with --output" % what)
    with open(os.path.join(out, "compare.html"), encoding="utf-8") as f:
        check(f.read() == page_text, "%s: compare.html is not the page compare prints" % what)

    check(page_text.startswith("<!DOCTYPE html>\n") and page_text.endswith("</html>\n"), "%s: not a page" % what)
    page = check_no_loads(page_text, what)
    show_all = "--all" in args
    got = [(w, m, v) for w, m, v, _ in page.rows]
    check(got == expected_rows(doc, show_all), "%s: table rows %s, the JSON's metrics %s"
          % (what, got, expected_rows(doc, show_all)))
    for window, metric, _, cells in page.rows:
        # the timing column: emulated, or why a metric was not judged (JSON not_judged)
        emulated = any(m["emulated"] or m.get("not_judged") for m in doc["metrics"])
        check(len(cells) == (9 if emulated else 8), "%s: row %s has %d cells" % (what, metric, len(cells)))
        line = table_line(table, window, cells[0])
        m = next(m for m in doc["metrics"] if m["window"] == window and m["metric"] == metric)
        if emulated:
            tag = m.get("not_judged") or ("emulated" if m["emulated"] else "")
            check(cells[8] == tag, "%s %s: timing cell %r, JSON emulated %s, not_judged %s"
                  % (what, metric, cells[8], m["emulated"], m.get("not_judged")))
        for c in cells[1:]:
            check(c in line, "%s %s: cell %r is not in the text table's line %r" % (what, metric, c, line))
    # the details: each side's kernel per run, and the first run's spec as JSON
    for side in ("baseline", "patched"):
        for rep in doc["inputs"][side]["reports"]:
            # a kernel arm's is its host VM's, said so
            release = rep["kernel_release"] + (" (host VM)" if rep.get("host_vm") else "")
            check(release in page.kernel_cells and rep["id"] in page.kernel_cells,
                  "%s: run %s on %s is not in the kernels table %s" % (what, rep["id"], rep["kernel_release"],
                                                                      page.kernel_cells))
    # every section has an anchor, and the page's contents link to each
    ids = {v for t, k, v in page.attrs if k == "id"}
    h2_ids = [v for (t, k, v) in page.attrs if t == "h2" and k == "id"]
    check(page.tags.count("h2") == len(h2_ids) and all(i.startswith("section-") for i in h2_ids),
          "%s: a section heading without an anchor: %s" % (what, h2_ids))
    links = [v[1:] for t, k, v in page.attrs if t == "a" and k == "href" and v.startswith("#section-")]
    check(set(h2_ids) <= set(links) and all(link in ids for link in links),
          "%s: the contents link %s, the sections are %s" % (what, links, h2_ids))
    # the spec as a reader takes it: sizes in MiB, not 268435456
    check(re.search(r"vm\.memory</th><td class=\"text\">\d+(\.\d+)? [MG]iB \(\d+ bytes\)", page_text),
          "%s: the spec's vm.memory is not in MiB" % what)
    first = ex.load(os.getcwd(), doc["inputs"]["baseline"]["reports"][0]["path"])
    check(page.pres and json.loads(page.pres[0]) == first["spec"], "%s: the first <pre> is not %s's spec: %r"
          % (what, first["id"], page.pres[:1]))
    check(("Verdict: %s (exit code %d)." % (doc["verdict"], rc)) in re.sub(r"<[^>]+>", "", page_text),
          "%s: no verdict line" % what)
    for w in doc["warnings"]:
        check("<li>%s</li>" % html.escape(w, quote=True).replace("&#x27;", "&apos;") in page_text,
              "%s: warning %r not in the page" % (what, w))

    # the plots: every SVG --output wrote, inline as it is (ids prefixed to keep them unique)
    svgs = sorted(f for f in os.listdir(out) if f.endswith(".svg"))
    unprefixed = re.sub(r' id="(?:metric-\d+-|timeline-)\d+-', ' id="', page_text)
    for name in svgs:
        with open(os.path.join(out, name), encoding="utf-8") as f:
            check(inline_form(f.read()) in unprefixed, "%s: %s is not inline in the page" % (what, name))
    check(page_text.count("<svg ") == len(svgs), "%s: %d inline SVGs, --output wrote %d"
          % (what, page_text.count("<svg "), len(svgs)))
    ids = re.findall(r' id="([^"]*)"', page_text)
    check(len(ids) == len(set(ids)), "%s: ids repeat: %s" % (what, sorted(i for i in ids if ids.count(i) > 1)))
    log("%s: %d rows as the JSON and the text table, %d plots inline, nothing loaded, exit %d"
        % (what, len(page.rows), len(svgs), rc))
    return page_text, doc


def hostile_reports(testdata, tmp):
    """stock.json and perm-upgrade.json with a hostile label, metric name and unavailable reason."""
    a = ex.relabel(ex.load(testdata, "stock.json"), "stock", HOSTILE_LABEL)
    b = ex.load(testdata, "perm-upgrade.json")
    for r in (a, b):
        for k, rep in enumerate(r["repetitions"]):
            win = rep["windows"]["snapshot"]
            win["metrics"][HOSTILE_METRIC] = 1000.0 + 10 * k + (500 if r is b else 0)
    rep0 = a["repetitions"][0]["windows"]["snapshot"]
    rep0["metrics"]["latency_p99_ns"] = None
    rep0["unavailable"]["latency_p99_ns"] = HOSTILE_REASON
    return ex.write_json(os.path.join(tmp, "hostile-a.json"), a), ex.write_json(os.path.join(tmp, "hostile-b.json"), b)


def check_hostile(snapbench, testdata, tmp):
    a, b = hostile_reports(testdata, tmp)
    args = [a, b, "--metric", "pf_per_s", "--metric", "latency_p99_ns", "--metric", "evil*"]
    text, doc = check_page(snapbench, args, tmp, "hostile label, metric and reason")
    check("<script" not in text.lower() and "\x1b" not in text, "the report's <script> or ESC reached the page")
    page = Page(text)
    sides = "".join(page.sides_text)
    check(HOSTILE_LABEL_SHOWN in sides, "the label reads %r, not %r" % (sides, HOSTILE_LABEL_SHOWN))
    check(any(m == HOSTILE_METRIC for _, m, _, _ in page.rows), "the hostile metric has no row: %s" % page.rows)
    notes = "".join(page.notes)
    check(HOSTILE_REASON in notes, "the unavailable reason reads %r" % notes)
    for s in ('&lt;script&gt;alert(&quot;label&quot;)&lt;/script&gt; &amp; &apos;q&apos; ?[2J',
              'evil&lt;script&gt;&amp;&quot;q&quot;_per_s', '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;no sample&quot;'):
        check(s in text, "%r is not in the page" % s)
    log("a label, a metric name and a reason with <script>, quotes and & come out as text, escaped")
    return text, doc


def migrating_pair(testdata, tmp, name):
    """Fixture name (one arm, stock) as baseline, and a copy of it as another run of arm patched."""
    b = ex.relabel(ex.load(testdata, name), "stock", "patched")
    b["id"] += "-patched"
    return name, ex.write_json(os.path.join(tmp, "patched-" + name), b)


SVG_NS = "{http://www.w3.org/2000/svg}"


def check_timeline_window(page_text, window, what):
    """The page's timeline is drawn, names window in its captions and marks it in every panel with one bar per
    side, in a group window-WINDOW (its id prefixed), shaded as the snapshot's are: half-opaque, the side's colour."""
    section = page_text.split('<h2 id="section-timeline">Timeline</h2>\n', 1)[1]
    check(not section.startswith("<p>No timeline"), "%s: no timeline: %s" % (what, section.split("\n", 1)[0]))
    check(section.startswith("<p>The rates through the %s window, every repetition of each side" % window),
          "%s: the timeline's caption reads %r" % (what, section.split("\n", 1)[0]))
    svg = section[section.index("<svg "):section.index("</svg>") + 6]
    root = ET.fromstring(svg)
    texts = ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]
    check(any(t.endswith("through the %s window" % window) for t in texts), "%s: no title names the %s window: %s"
          % (what, window, texts[:1]))
    other = [t for t in texts if re.search(r"\b(snapshot|migration)\b", t) and window not in t]
    check(not other, "%s: timeline text naming another window than %s: %s" % (what, window, other))
    panels = [g for g in root.iter(SVG_NS + "g") if re.search(r"-panel-[a-z]+$", g.get("id", ""))]
    check(len(panels) >= 2, "%s: %d timeline panels" % (what, len(panels)))
    for panel in panels:
        bands = [g for g in panel.iter(SVG_NS + "g") if g.get("id", "").endswith("-window-" + window)]
        check(len(bands) == 2, "%s: %s has %d %s bars, expected one per side"
              % (what, panel.get("id"), len(bands), window))
        for k, g in enumerate(bands):
            rects = list(g.iter(SVG_NS + "rect"))
            check(len(rects) == 1 and float(rects[0].get("width")) > 0
                  and rects[0].get("fill") == "#%02x%02x%02x" % PLOT_COLOURS[k]
                  and rects[0].get("fill-opacity") == "0.50",
                  "%s: %s's %s bar of side %d is %s" % (what, panel.get("id"), window, k,
                                                         [r.attrib for r in rects]))
        stray = [g.get("id") for g in panel.iter(SVG_NS + "g") if "-window-" in g.get("id", "")
                 and not g.get("id").endswith("-window-" + window)]
        check(not stray, "%s: %s marks other windows: %s" % (what, panel.get("id"), stray))
    log("%s: the timeline marks each side's %s window in %d panels" % (what, window, len(panels)))


def case_structure(snapbench, testdata, tmp):
    os.chdir(testdata)
    for what, args in CASES:
        check_page(snapbench, args, tmp, what)
    check_hostile(snapbench, testdata, tmp)
    # the timeline marks the window the scenario acts in: a migrating run's migration, or the snapshot
    for name, window in (("dirty-log.json", "migration"), ("postcopy.json", "migration"),
                         ("numa-hinting.json", "steady")):
        if window == "steady":  # two arms of one run: the unpinned against the pinned
            what = "%s, unpinned vs pinned" % name
            args = ["--baseline", "file=%s,label=unpinned" % name, "--patched", "file=%s,label=pinned" % name]
        else:
            what = "%s vs its copy as patched" % name
            args = list(migrating_pair(testdata, tmp, name))
        text, _ = check_page(snapbench, args, tmp, what)
        check_timeline_window(text, window, what)
        # the Markdown beside the plots links the same timeline under the same name
        out = tempfile.mkdtemp(prefix="md-", dir=tmp)
        ex.run([snapbench, "compare", "--output", out] + args, rc=0)
        with open(os.path.join(out, "compare.md"), encoding="utf-8") as f:
            md = f.read()
        check("- [timeline](timeline.svg): the rates through the %s window, one repetition per side\n" % window in md,
              "%s: compare.md does not link the %s timeline:\n%s" % (what, window, md))
    text, _ = check_page(snapbench, ["--baseline", "stock.json", "--patched", "regressed.json"], tmp,
                         "background-snapshot timeline")
    check_timeline_window(text, "snapshot", "background-snapshot timeline")


# ---- Chromium ----

def need_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    ex.skip("chromium (Debian package chromium)")


def chromium(browser, tmp, url, *args):
    """Headless Chromium on url; its stdout, and the console messages it logged."""
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + os.path.join(tmp, "profile"),
            "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0"] + list(args) + [url]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "chromium %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr[-3000:]))
    # this Chromium logs every console message as INFO:CONSOLE; older ones as ERROR:CONSOLE
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l or "Uncaught" in l]
    return p.stdout, console


def png_pixels(path):
    """(width, height, set of RGB colours) of an 8-bit RGB or RGBA PNG without interlacing."""
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "%s is not a PNG" % path)
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, ctype, _, _, interlace = hdr
    check(depth == 8 and ctype in (2, 6) and interlace == 0, "PNG of depth %d, colour type %d, interlace %d"
          % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, colours = bytearray(stride), set()
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the PNG filter of this line
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xff
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xff
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ftype == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        for x in range(0, stride, bpp):
            colours.add(bytes(line[x:x + 3]))
        prev = line
    return width, height, colours


def case_chromium(snapbench, testdata, tmp):
    browser = need_chromium()
    # the console check must catch a page that throws or loads: a control page first
    control = os.path.join(tmp, "control.html")
    with open(control, "w") as f:
        f.write("<!DOCTYPE html><title>control</title><script>throw new Error('control')</script>\n")
    _, console = chromium(browser, tmp, "file://" + control, "--dump-dom")
    check(any("Uncaught" in l for l in console), "the console check missed a page that throws: %s" % console)

    os.chdir(testdata)
    pages = [("stock vs regressed", ["--baseline", "stock.json", "--patched", "regressed.json"], None),
             ("two arms, two windows", ["two-arms.json", "--window", "pre", "--window", "snapshot"], None)]
    a, b = hostile_reports(testdata, tmp)
    pages.append(("hostile", [a, b, "--metric", "pf_per_s", "--metric", "latency_p99_ns", "--metric", "evil*"],
                  HOSTILE_LABEL_SHOWN))
    for i, (what, args, label) in enumerate(pages):
        doc, rc = ex.compare_doc(snapbench, None, args)
        path = os.path.join(tmp, "page-%d.html" % i)
        with open(path, "w", encoding="utf-8") as f:
            f.write(ex.run([snapbench, "compare", "--format", "html"] + args, rc=rc).stdout)
        dom, console = chromium(browser, tmp, "file://" + path, "--dump-dom")
        check(not console, "%s: console messages: %s" % (what, console))
        page = Page(dom)
        got = [(w, m, v) for w, m, v, _ in page.rows]
        check(got == expected_rows(doc, False), "%s: Chromium's DOM has rows %s, the JSON %s"
              % (what, got, expected_rows(doc, False)))
        check("script" not in {t.lower() for t in page.tags}, "%s: a <script> element in the DOM" % what)
        if label:
            check(label in "".join(page.sides_text), "%s: the label in the DOM reads %r" % (what, page.sides_text))
        log("%s: Chromium's DOM holds the %d metrics of the JSON as rows, console empty" % (what, len(got)))

    # at 1200 px the page scrolls no sideways: n, the verdict and the timing in view (a copy of each page
    # measured by a script of the test's, its CSP that forbids scripts taken out; the pages themselves have none)
    for i, (what, _, _) in enumerate(pages):
        with open(os.path.join(tmp, "page-%d.html" % i), encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
        text = text.replace("</body>", "<script>window.onload = function () { var e = document.documentElement;"
                            " document.body.setAttribute('data-measure', e.scrollWidth + ' ' + e.clientWidth); };"
                            "</script></body>")
        path = os.path.join(tmp, "measure-%d.html" % i)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        dom, _ = chromium(browser, tmp, "file://" + path, "--dump-dom", "--window-size=1200,900")
        got = re.search(r'data-measure="(\d+) (\d+)"', dom)
        check(got and int(got.group(1)) <= int(got.group(2)), "%s: at 1200 px the page is %s px wide (scrollWidth, "
              "clientWidth): the table overflows" % (what, got and got.groups()))
        log("%s at 1200 px: scrollWidth %s <= clientWidth %s" % (what, got and got.group(1), got and got.group(2)))

    # one screenshot: the regressed comparison, whose open details show the plots
    shot = os.path.join(tmp, "page.png")
    _, console = chromium(browser, tmp, "file://" + os.path.join(tmp, "page-0.html"), "--screenshot=" + shot,
                          "--window-size=1280,1800", "--hide-scrollbars")
    check(not console, "screenshot: console messages: %s" % console)
    width, height, colours = png_pixels(shot)
    check((width, height) == (1280, 1800), "screenshot of %dx%d" % (width, height))
    check(len(colours) > 16, "the screenshot is blank: %d colours" % len(colours))
    missing = [c for c in PLOT_COLOURS if bytes(c) not in colours]
    check(not missing, "the plots' colours %s are not in the screenshot (%d colours): the SVG did not render"
          % (missing, len(colours)))
    log("screenshot %dx%d: %d colours, the plots' among them" % (width, height, len(colours)))


def main():
    snapbench, testdata = (os.path.abspath(a) for a in sys.argv[1:3])
    case = sys.argv[3]
    with tempfile.TemporaryDirectory(prefix="snapbench-html-") as tmp:
        if case == "structure":
            case_structure(snapbench, testdata, tmp)
        elif case == "chromium":
            case_chromium(snapbench, testdata, tmp)
        else:
            fail("unknown case %s" % case)


if __name__ == "__main__":
    main()
