/**
 * A POST activity's heartbeat note clears only the attempt right after it (issue 29, case 1): the
 * note that says "may have been sent" is sent asynchronously, so a worker killed just after the
 * POST can leave an older attempt's "not sent" on the server.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { earlierAttemptProvedNothingSent, noteAttempt, noteMaySend } from '../../src/activities/provider-call';

describe('an earlier attempt proved nothing was sent', () => {
  test("only when the attempt just before this one wrote 'no'", () => {
    expect(earlierAttemptProvedNothingSent({ sent: 'no', attempt: 2 }, 3)).toBe(true);
  });

  test("not when an older attempt's 'no' is all the server kept (the last attempt's 'maybe' was lost with its worker)", () => {
    expect(earlierAttemptProvedNothingSent({ sent: 'no', attempt: 1 }, 3)).toBe(false);
  });

  test("not for a note without its attempt (written by an earlier version), a 'maybe', or none", () => {
    expect(earlierAttemptProvedNothingSent({ sent: 'no' }, 2)).toBe(false);
    expect(earlierAttemptProvedNothingSent({ sent: 'maybe', attempt: 1 }, 2)).toBe(false);
    expect(earlierAttemptProvedNothingSent(undefined, 2)).toBe(false);
  });
});

describe('before a POST (noteMaySend)', () => {
  /** The heartbeats an activity sent, in a mock activity context (no I/O). */
  async function heartbeatsOf(run: () => void): Promise<unknown[]> {
    const env = new MockActivityEnvironment({ attempt: 2 });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    await env.run(async () => run());
    return beats;
  }

  test("sends nothing when this attempt wrote no note: the next attempt reads an older note, or none, as 'maybe'", async () => {
    expect(await heartbeatsOf(() => noteMaySend())).toEqual([]);
  });

  test("overwrites this attempt's own 'no' (a second POST in one attempt), so the next attempt does not read 'not sent'", async () => {
    expect(
      await heartbeatsOf(() => {
        noteAttempt({ sent: 'no' });
        noteMaySend();
      }),
    ).toEqual([
      { sent: 'no', attempt: 2 },
      { sent: 'maybe', attempt: 2 },
    ]);
  });
});
