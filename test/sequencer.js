/**
 * Longest suites first, from the times committed in test/suite-times.json (`npm run test:times --
 * --write-times` rewrites it from a full run): jest's own order needs durations from an earlier run
 * in its cache, which a fresh clone (CI) has not, so it falls back to file size, and a short file
 * that runs for a minute and a half (test/deploy/dist-check.test.ts) started last and ran alone at
 * the end. A suite missing from the file takes this machine's last duration from jest's cache, or
 * DEFAULT_SECONDS (docs/testing.md).
 */
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = join(__dirname, '..');
const DEFAULT_SECONDS = 10;

function committedTimes() {
  try {
    return JSON.parse(readFileSync(join(__dirname, 'suite-times.json'), 'utf8')).seconds;
  } catch {
    return {};
  }
}

class LongestFirst extends Sequencer {
  sort(tests) {
    const committed = committedTimes();
    const seconds = (test) => {
      const known = committed[relative(ROOT, test.path)];
      if (typeof known === 'number') return known;
      const cached = this._getCache(test)[test.path];
      return cached && cached[1] > 0 ? cached[1] / 1000 : DEFAULT_SECONDS;
    };
    return [...tests].sort((a, b) => seconds(b) - seconds(a) || (a.path < b.path ? -1 : 1));
  }
}

module.exports = LongestFirst;
