// SPDX-License-Identifier: MIT
// browser.cjs - what jitstack's profiles look like to people, checked in
// headless Chromium (playwright-core drives Debian's /usr/bin/chromium).
//
//   node browser.cjs svg FILE.svg NAME SHOT.png
//     Opens the flame graph, finds the frames titled NAME, hovers over the
//     widest, clicks it (zoom) and "Reset zoom", types NAME into the search
//     box, and saves a screenshot.  Prints one JSON object of what it saw.
//   node browser.cjs speedscope RELEASE_DIR PROFILE NAME SHOT.png
//     Serves speedscope's release files and PROFILE on 127.0.0.1, lets
//     speedscope import PROFILE (#profileURL), opens its sandwich view and
//     prints, as JSON, the importer's message and the table's rows for NAME
//     (summed: speedscope keeps one per line of a function).
//
// Exit 0 with the JSON on stdout; exit 1 with a message otherwise.  The
// shell tests compare the JSON with what the profile itself holds.
'use strict';
const path = require('path');
const fs = require('fs');
const http = require('http');

const modules = process.env.NODE_MODULES;
const { chromium } = require(path.join(modules, 'playwright-core'));

function die(msg) {
	console.error('browser.cjs: ' + msg);
	process.exit(1);
}

async function launch() {
	return chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
}

async function svg(file, name, shot) {
	const browser = await launch();
	try {
		const page = await browser.newPage({ viewport: { width: 1200, height: 400 } });
		const errors = [];
		page.on('pageerror', (e) => errors.push(String(e)));
		await page.goto('file://' + path.resolve(file));
		await page.waitForSelector('#frames');
		const out = await page.evaluate((name) => {
			const frames = Array.from(document.querySelectorAll('g.f'));
			const mine = frames.filter((g) => {
				const t = g.querySelector('title').textContent;
				return t.slice(0, t.lastIndexOf(' (')) === name;
			});
			const r = (g) => g.querySelector('rect');
			mine.sort((a, b) => +r(b).getAttribute('width') - +r(a).getAttribute('width'));
			if (mine.length) mine[0].setAttribute('id', 'widest');
			return {
				frames: frames.length,
				total: +document.getElementById('frames').getAttribute('data-total'),
				matching: mine.length,
				samples: mine.reduce((s, g) => s + +g.getAttribute('data-n'), 0),
				kinds: Array.from(new Set(mine.map((g) => g.getAttribute('data-k')))),
				title: mine.length ? mine[0].querySelector('title').textContent : null,
				width: mine.length ? +r(mine[0]).getAttribute('width') : 0,
				label: mine.length ? mine[0].querySelector('text').textContent : null,
			};
		}, name);
		if (!out.matching) {
			out.errors = errors;
			return out;
		}
		await page.hover('#widest rect');
		out.details_on_hover = await page.textContent('#details');
		await page.click('#widest rect');
		out.width_zoomed = +(await page.getAttribute('#widest rect', 'width'));
		out.unzoom_shown = await page.isVisible('#unzoom');
		await page.click('#unzoom');
		out.width_unzoomed = +(await page.getAttribute('#widest rect', 'width'));
		await page.fill('#search', name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
		out.matched = await page.textContent('#matched');
		out.fill_searched = await page.getAttribute('#widest rect', 'fill');
		await page.fill('#search', '');
		await page.evaluate(() => document.activeElement && document.activeElement.blur());
		await page.mouse.move(0, 0);
		const height = await page.evaluate(() => +document.documentElement.getAttribute('height'));
		await page.setViewportSize({ width: 1200, height: Math.min(Math.max(height, 100), 4000) });
		await page.screenshot({ path: shot, timeout: 60000 });
		out.errors = errors;
		return out;
	} finally {
		await browser.close();
	}
}

async function speedscope(release, profile, name, shot) {
	const server = http.createServer((req, res) => {
		const url = decodeURIComponent(req.url.split(/[?#]/)[0]);
		const file = url === '/profile' ? profile : path.join(release, url === '/' ? 'index.html' : path.normalize(url));
		if (url !== '/profile' && !file.startsWith(path.resolve(release) + path.sep)) {
			res.writeHead(403);
			return res.end();
		}
		fs.readFile(file, (err, data) => {
			res.writeHead(err ? 404 : 200);
			res.end(err ? undefined : data);
		});
	});
	await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
	const base = 'http://127.0.0.1:' + server.address().port;
	const browser = await launch();
	try {
		const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
		const log = [];
		page.on('console', (m) => log.push(m.text()));
		page.on('pageerror', (e) => log.push('error: ' + e));
		await page.goto(base + '/index.html#profileURL=' + encodeURIComponent(base + '/profile') + '&title=jitstack');
		// the importer logs "Importing as <format>" and then the time it took
		for (let i = 0; i < 100 && !log.some((l) => /^import:/.test(l)); i++) await page.waitForTimeout(100);
		await page.keyboard.press('3'); // the sandwich view: a table of every function
		await page.waitForTimeout(500);
		const rows = await page.evaluate(() => {
			const text = document.body.innerText.split('\n').map((s) => s.trim()).filter(Boolean);
			// each row reads: total "V (P%)", self "V (P%)", name; V is a count, or a
			// time with its unit for profiles that measure time (pprof's cpu)
			const scale = { '': 1, ns: 1, us: 1e3, '\u00b5s': 1e3, ms: 1e6, s: 1e9 };
			const cell = (s) => {
				const m = /^([\d.]+)(ns|us|\u00b5s|ms|s)? \((<?[\d.]+)%\)$/.exec(s);
				// shown rounded ("1.37s"): half its last digit is how far off it may be
				const dec = (m && m[1].split('.')[1]) || '';
				return m && { v: +m[1] * scale[m[2] || ''], tol: 0.5 * Math.pow(10, -dec.length) * scale[m[2] || ''],
					unit: m[2] ? 'ns' : 'count', pct: m[3] };
			};
			const out = [];
			for (let i = 0; i + 2 < text.length; i++) {
				const t = cell(text[i]), s = cell(text[i + 1]);
				if (t && s) {
					out.push({ total: t.v, self: s.v, tol: s.tol, unit: s.unit, self_pct: s.pct, name: text[i + 2] });
					i += 2;
				}
			}
			return out;
		});
		await page.screenshot({ path: shot });
		return {
			importer: log.filter((l) => /^Importing as/.test(l)),
			errors: log.filter((l) => /^error:|Failed|failed/.test(l)),
			rows: rows.length,
			// a function is one row per distinct (name, file, line) frame
			// where the profile gives lines (pprof): its rows summed
			row: rows.filter((r) => r.name === name).reduce((a, r) => a ? { ...a, total: a.total + r.total, self: a.self + r.self, tol: a.tol + r.tol, rows: a.rows + 1 } : { ...r, rows: 1 }, null),
			self_sum: rows.reduce((s, r) => s + r.self, 0),
			self_sum_tol: rows.reduce((s, r) => s + r.tol, 0),
		};
	} finally {
		await browser.close();
		server.close();
	}
}

(async () => {
	const [mode, ...args] = process.argv.slice(2);
	let out;
	if (mode === 'svg' && args.length === 3) out = await svg(...args);
	else if (mode === 'speedscope' && args.length === 4) out = await speedscope(...args);
	else die('usage: browser.cjs svg FILE NAME SHOT | speedscope RELEASE PROFILE NAME SHOT');
	console.log(JSON.stringify(out));
})().catch((e) => die(String(e && e.stack ? e.stack : e)));
