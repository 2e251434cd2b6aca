// Reads an HdrHistogram interval log with hdr-histogram-js (the HdrHistogram
// project's JavaScript implementation) and prints, as one JSON line, the
// number of intervals and the count and percentiles of their sum. Given
// hammer's --json file as well, exits 1 unless they equal its action latency
// (tests/test_hlog_interop.sh: hammer's --hdr-log read by a reader not ours).
'use strict';
const fs = require('fs');
const hdr = require('hdr-histogram-js');

const text = fs.readFileSync(process.argv[2], 'utf8');
const reader = new hdr.HistogramLogReader(text);
const sum = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3600000000,
                        numberOfSignificantValueDigits: 3, bitBucketSize: 64 });
let intervals = 0;
for (let h; (h = reader.nextIntervalHistogram()) !== null;) {
  sum.add(h);
  intervals++;
}
// hammer takes percentiles as HdrHistogram does (the sample at
// ceil(p/100 * N)), so the JS reader's own getValueAtPercentile must agree.
const at = (p) => sum.getValueAtPercentile(p);
const got = {
  intervals,
  count: sum.totalCount,
  p50: at(50),
  p90: at(90),
  p99: at(99),
  p999: at(99.9),
  max: sum.maxValue,
};
console.log(JSON.stringify(got));
if (process.argv[3]) {
  const want = JSON.parse(fs.readFileSync(process.argv[3], 'utf8')).latency_us.action;
  let ok = intervals > 0;
  for (const k of ['count', 'p50', 'p90', 'p99', 'p999', 'max']) {
    if (got[k] !== want[k]) {
      console.log(`MISMATCH ${k}: log ${got[k]}, summary ${want[k]}`);
      ok = false;
    }
  }
  process.exit(ok ? 0 : 1);
}
