/**
 * What a card's status says of its DELETE (issue 51): the item a delete may become asks the card, and
 * reads its status for the deletion, not for its issuance (where ENABLE means the card, and its
 * initialAmount, exist). One table, statuses.ts `cardDeletion`.
 */
import { DELETE_CARD_FLOW_KIND, attemptItem, lookupOf, providerVerdict } from '../../src/shared/open-items';
import { phaseOf } from '../../src/shared/statuses';

const lookup = lookupOf(DELETE_CARD_FLOW_KIND, { cardId: 'crd_1' })!;

test('a delete is looked up by its card, read for the deletion', () => {
  expect(lookup).toEqual({ resource: 'cardDeletion', ref: 'crd_1' });
  expect(lookupOf(DELETE_CARD_FLOW_KIND, {})).toBeUndefined();
});

test.each([
  ['DELETING', 'moved'],
  ['DELETED', 'moved'],
  ['ENABLE', 'not-moved'],
  ['DISABLE', 'not-moved'],
  ['CREATING', undefined],
  ['EXPIRED', undefined],
  ['SOMETHING_NEW', undefined],
])('a card reading %s settles a delete %s', (status, verdict) => {
  expect(providerVerdict(lookup, { known: true, status })).toBe(verdict);
});

test("a card the provider does not show is read lag, never 'not moved'", () => {
  expect(providerVerdict(lookup, { known: false })).toBeUndefined();
});

test('the same ENABLE means issued for issueCard and not deleted for a delete', () => {
  expect(phaseOf('card', 'ENABLE')).toBe('succeeded');
  expect(phaseOf('cardDeletion', 'ENABLE')).toBe('failed');
  expect(providerVerdict(lookupOf('issueCard', { cardId: 'crd_1' })!, { known: true, status: 'ENABLE' })).toBe('moved');
});

test("the delete's attempt records the card, its balance and its lookup", () => {
  const owner = { workflowId: 'card/crd_1', runId: 'r1', updateId: 'u1', action: 'delete' as const };
  expect(attemptItem({ owner, flowKind: DELETE_CARD_FLOW_KIND, openedAt: 1 }, { cardId: 'crd_1', amount: 1000 })).toMatchObject({
    owner,
    flowKind: 'deleteCard',
    cardId: 'crd_1',
    amount: 1000,
    lookup: { resource: 'cardDeletion', ref: 'crd_1' },
  });
});
