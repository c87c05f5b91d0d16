/**
 * When reconciliation's next batch may go (src/workflows/reconciliation/pace.ts): once the provider's
 * window the last read landed in has ended, by its X-RateLimit-Reset; a whole window after the
 * answers when no believable reset came.
 */
import { nextWindowAt } from '../../src/workflows/reconciliation/pace';

const WINDOW = 60_000;
const MARGIN = 1_000; // min(1 s, window ÷ 50)
const NOW = Date.UTC(2026, 10, 23, 12, 0, 30);

describe('nextWindowAt', () => {
  test('the latest reset of the batch, plus the margin: reads that spanned two windows wait for the second', () => {
    expect(nextWindowAt([{ windowResetAt: NOW + 10_000 }, { windowResetAt: NOW + 29_000 }], NOW, WINDOW)).toBe(NOW + 29_000 + MARGIN);
  });

  test('a window that has already ended lets the next batch go at once', () => {
    expect(nextWindowAt([{ windowResetAt: NOW - 5_000 }], NOW, WINDOW)).toBe(NOW);
  });

  test('an answer without the header waits a whole window, and so does the batch it is in', () => {
    expect(nextWindowAt([{}], NOW, WINDOW)).toBe(NOW + WINDOW);
    expect(nextWindowAt([{ windowResetAt: NOW + 1_000 }, {}], NOW, WINDOW)).toBe(NOW + WINDOW);
  });

  test('a reset that is not believable counts as a whole window: beyond one window ahead, or in seconds', () => {
    expect(nextWindowAt([{ windowResetAt: NOW + 5 * WINDOW }], NOW, WINDOW)).toBe(NOW + WINDOW);
    expect(nextWindowAt([{ windowResetAt: Math.floor(NOW / 1000) + 30 }], NOW, WINDOW)).toBe(NOW + WINDOW);
  });

  test('the margin is a fiftieth of a short window', () => {
    expect(nextWindowAt([{ windowResetAt: NOW + 2_000 }], NOW, 3_000)).toBe(NOW + 2_000 + 60);
  });
});
