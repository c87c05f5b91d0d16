/**
 * A POST activity's heartbeat note clears only the attempt right after it (issue 29, case 1): the
 * note that says "may have been sent" is sent asynchronously, so a worker killed just after the
 * POST can leave an older attempt's "not sent" on the server.
 */
import { earlierAttemptProvedNothingSent } from '../../src/activities/provider-call';

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
