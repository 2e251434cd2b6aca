#!/usr/bin/env node
// record_har.js — records a HAR of Chromium clicking through a php-via app,
// the way a person would: load a page, wait for its SSE stream, click its
// button a few times with human pauses, move on to the next page, close the
// tab. Used to make tests/data/phpvia-bench.har from php-via's own
// tests/Load/bench_app.php (docs/flows.md says how).
//
//   node tests/tools/record_har.js --url http://127.0.0.1:23099 --out FILE.har \
//        [--chromium /usr/bin/chromium] [--pages /bench/counter:3,/bench/spreadsheet:3]
//
// --pages: each page in turn, and how often the person clicks its button.
//
// Plain node and the DevTools protocol over --remote-debugging-pipe (no npm
// package, no browser download). The HAR is built from the Network.* events
// (Chromium has no HAR export of its own outside DevTools); the SSE stream's
// bytes are captured with Network.streamResourceContent, so the HAR holds
// what the server told the page (hammer import-har uses it to tell the
// signals the user set from those the server owns). Loopback only: the
// script refuses any other host.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

function parseArgs(argv) {
    const a = { chromium: '/usr/bin/chromium', pages: '/bench/counter:3,/bench/spreadsheet:3' };
    for (let i = 2; i < argv.length; i++) {
        const k = argv[i];
        const v = argv[++i];
        if (k === '--url') a.url = v;
        else if (k === '--out') a.out = v;
        else if (k === '--chromium') a.chromium = v;
        else if (k === '--pages') a.pages = v;
        else throw new Error('unknown option ' + k);
    }
    if (!a.url || !a.out) throw new Error('usage: record_har.js --url URL --out FILE.har');
    const host = new URL(a.url).hostname;
    if (host !== '127.0.0.1' && host !== '[::1]' && host !== 'localhost')
        throw new Error('loopback targets only, not ' + host);
    a.pageList = a.pages.split(',').map((p) => {
        const [route, clicks] = p.split(':');
        return { route, clicks: Number(clicks || 1) };
    });
    return a;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One DevTools connection over the pipe: JSON messages ended by NUL.
class Cdp {
    constructor(child) {
        this.out = child.stdio[3];
        this.nextId = 1;
        this.pending = new Map();
        this.listeners = [];
        let buf = '';
        child.stdio[4].on('data', (d) => {
            buf += d.toString('utf8');
            let i;
            while ((i = buf.indexOf('\0')) >= 0) {
                const msg = JSON.parse(buf.slice(0, i));
                buf = buf.slice(i + 1);
                this.dispatch(msg);
            }
        });
    }
    dispatch(msg) {
        if (msg.id && this.pending.has(msg.id)) {
            const { resolve, reject, method } = this.pending.get(msg.id);
            this.pending.delete(msg.id);
            if (msg.error) reject(new Error(method + ': ' + msg.error.message));
            else resolve(msg.result);
            return;
        }
        for (const l of this.listeners) l(msg);
    }
    send(method, params = {}, sessionId) {
        const id = this.nextId++;
        const msg = { id, method, params };
        if (sessionId) msg.sessionId = sessionId;
        this.out.write(JSON.stringify(msg) + '\0');
        return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject, method }));
    }
    on(fn) {
        this.listeners.push(fn);
    }
}

// The HAR entries, built from Network.* events of one page session.
class Recorder {
    constructor(cdp, sessionId) {
        this.cdp = cdp;
        this.sid = sessionId;
        this.reqs = new Map(); // requestId -> state
        this.order = [];
        this.sseOpened = 0;
    }
    handle(msg) {
        if (msg.sessionId !== this.sid || !msg.method || !msg.method.startsWith('Network.')) return;
        const p = msg.params;
        switch (msg.method) {
            case 'Network.requestWillBeSent': {
                if (this.reqs.has(p.requestId) && p.redirectResponse) {
                    // A redirect: finish the first hop as its own entry.
                    const prev = this.reqs.get(p.requestId);
                    prev.response = p.redirectResponse;
                    prev.end = p.timestamp;
                    this.reqs.set(p.requestId + ':' + prev.hop, prev);
                }
                const st = {
                    id: p.requestId,
                    hop: (this.reqs.get(p.requestId)?.hop || 0) + 1,
                    request: p.request,
                    type: (p.type || 'Other').toLowerCase(),
                    start: p.timestamp,
                    wall: p.wallTime,
                    chunks: [],
                };
                if (!this.reqs.has(p.requestId)) this.order.push(p.requestId);
                this.reqs.set(p.requestId, st);
                if (p.request.hasPostData && p.request.postData === undefined)
                    this.cdp
                        .send('Network.getRequestPostData', { requestId: p.requestId }, this.sid)
                        .then((r) => (st.request.postData = r.postData))
                        .catch(() => {});
                break;
            }
            case 'Network.responseReceived': {
                const st = this.reqs.get(p.requestId);
                if (!st) break;
                st.response = p.response;
                st.headersAt = p.timestamp;
                if ((p.response.mimeType || '').includes('event-stream')) {
                    this.sseOpened++;
                    this.cdp
                        .send('Network.streamResourceContent', { requestId: p.requestId }, this.sid)
                        .then((r) => {
                            if (r.bufferedData) st.chunks.unshift(Buffer.from(r.bufferedData, 'base64'));
                        })
                        .catch(() => {});
                }
                break;
            }
            case 'Network.dataReceived': {
                const st = this.reqs.get(p.requestId);
                if (st && p.data) st.chunks.push(Buffer.from(p.data, 'base64'));
                break;
            }
            case 'Network.loadingFinished':
            case 'Network.loadingFailed': {
                const st = this.reqs.get(p.requestId);
                if (!st) break;
                st.end = p.timestamp;
                if (msg.method === 'Network.loadingFailed') st.error = p.errorText;
                else if (st.type === 'document' || st.type === 'fetch' || st.type === 'xhr')
                    st.body = this.cdp
                        .send('Network.getResponseBody', { requestId: p.requestId }, this.sid)
                        .catch(() => null);
                break;
            }
        }
    }
    async entries(browserVersion) {
        const out = [];
        const all = [];
        for (const id of this.order) {
            for (let hop = 1; this.reqs.has(id + ':' + hop); hop++) all.push(this.reqs.get(id + ':' + hop));
            all.push(this.reqs.get(id));
        }
        for (const st of all) {
            const r = st.request;
            const resp = st.response || { status: 0, statusText: '', headers: {}, mimeType: '' };
            const end = st.end || st.headersAt || st.start;
            const ms = (a, b) => (a && b ? Math.max(0, Math.round((b - a) * 1e6) / 1000) : -1);
            let text;
            if (st.chunks.length) text = Buffer.concat(st.chunks).toString('utf8');
            else if (st.body) {
                const b = await st.body;
                if (b) text = b.base64Encoded ? Buffer.from(b.body, 'base64').toString('utf8') : b.body;
            }
            const u = new URL(r.url);
            const entry = {
                startedDateTime: new Date(st.wall * 1000).toISOString(),
                time: ms(st.start, end),
                request: {
                    method: r.method,
                    url: r.url,
                    httpVersion: 'HTTP/1.1',
                    headers: Object.entries(r.headers || {}).map(([name, value]) => ({ name, value })),
                    queryString: [...u.searchParams].map(([name, value]) => ({ name, value })),
                    cookies: [],
                    headersSize: -1,
                    bodySize: r.postData ? Buffer.byteLength(r.postData) : 0,
                },
                response: {
                    status: resp.status,
                    statusText: resp.statusText || '',
                    httpVersion: 'HTTP/1.1',
                    headers: Object.entries(resp.headers || {}).map(([name, value]) => ({ name, value })),
                    cookies: [],
                    content: { size: text ? Buffer.byteLength(text) : 0, mimeType: resp.mimeType || '' },
                    redirectURL: (resp.headers && (resp.headers.location || resp.headers.Location)) || '',
                    headersSize: -1,
                    bodySize: -1,
                },
                cache: {},
                timings: { send: 0, wait: ms(st.start, st.headersAt || end), receive: ms(st.headersAt, end) },
                _resourceType: st.type,
            };
            if (r.postData !== undefined) {
                const ct = (r.headers && (r.headers['Content-Type'] || r.headers['content-type'])) || '';
                entry.request.postData = { mimeType: ct, text: r.postData };
            }
            if (text !== undefined) entry.response.content.text = text;
            if (st.error) entry._error = st.error;
            if (entry.timings.receive < 0) entry.timings.receive = 0;
            if (entry.timings.wait < 0) entry.timings.wait = 0;
            out.push(entry);
        }
        return {
            log: {
                version: '1.2',
                creator: { name: 'hammer tests/tools/record_har.js', version: '1' },
                browser: { name: 'Chromium', version: browserVersion.replace(/^[^\/]*\//, '') },
                pages: [],
                entries: out,
            },
        };
    }
}

async function main() {
    const a = parseArgs(process.argv);
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hammer-har-'));
    const child = spawn(
        a.chromium,
        [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--user-data-dir=' + profile,
            '--remote-debugging-pipe',
            'about:blank',
        ],
        { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] }
    );
    const cleanup = () => fs.rmSync(profile, { recursive: true, force: true });
    const cdp = new Cdp(child);
    try {
        const ver = await cdp.send('Browser.getVersion');
        const { targetInfos } = await cdp.send('Target.getTargets');
        const page = targetInfos.find((t) => t.type === 'page');
        const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
        const rec = new Recorder(cdp, sessionId);
        cdp.on((m) => rec.handle(m));
        let loaded = 0;
        cdp.on((m) => {
            if (m.sessionId === sessionId && m.method === 'Page.loadEventFired') loaded++;
        });
        const S = (method, params) => cdp.send(method, params, sessionId);
        await S('Network.enable', {});
        await S('Page.enable', {});
        await S('Runtime.enable', {});

        const waitFor = async (cond, ms, what) => {
            const until = Date.now() + ms;
            while (!cond()) {
                if (Date.now() > until) throw new Error('timed out waiting for ' + what);
                await sleep(20);
            }
        };
        // A person's pause: 400..1200 ms, fixed by a seeded sequence so two
        // recordings click alike.
        let seed = 7;
        const pause = () => {
            seed = (seed * 1103515245 + 12345) % 2147483648;
            return 400 + (seed % 800);
        };
        for (const { route, clicks } of a.pageList) {
            const before = { loaded, sse: rec.sseOpened };
            await S('Page.navigate', { url: new URL(route, a.url).toString() });
            await waitFor(() => loaded > before.loaded, 10000, 'the load of ' + route);
            await waitFor(() => rec.sseOpened > before.sse, 10000, 'the SSE stream of ' + route);
            await sleep(pause());
            for (let i = 0; i < clicks; i++) {
                // Click where the button is, as a mouse would.
                const { result } = await S('Runtime.evaluate', {
                    expression:
                        '(() => { const r = document.querySelector("button").getBoundingClientRect();' +
                        ' return JSON.stringify([r.x + r.width / 2, r.y + r.height / 2]); })()',
                    returnByValue: true,
                });
                const [x, y] = JSON.parse(result.value);
                for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased'])
                    await S('Input.dispatchMouseEvent', { type, x, y, button: 'left', clickCount: 1 });
                await sleep(pause());
            }
        }
        // Leaving the last page sends php-via's close beacon, as a closing tab does.
        const before = loaded;
        await S('Page.navigate', { url: 'about:blank' });
        await waitFor(() => loaded > before, 10000, 'about:blank');
        await sleep(2000);
        const har = await rec.entries(ver.product);
        fs.writeFileSync(a.out, JSON.stringify(har, null, 1) + '\n');
        console.log(`wrote ${a.out}: ${har.log.entries.length} entries`);
        await cdp.send('Browser.close').catch(() => {});
    } finally {
        setTimeout(() => child.kill('SIGKILL'), 2000).unref();
        child.on('exit', cleanup);
    }
}

main().catch((e) => {
    console.error('record_har: ' + e.message);
    process.exit(1);
});
