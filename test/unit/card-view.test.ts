/**
 * toCardView (shared/card-rules.ts) shows at most the first 6 and last 4 digits of a card number,
 * whatever the provider sends: the spec says a masked PAN, but a provider (or a proxy, or a
 * misconfigured account) that sends the full one must not put it into a view, history or a log.
 */
import { maskCardNumber, toCardView } from '../../src/shared/card-rules';

const card = (cardNumber: unknown) => toCardView({ cardId: 'crd_1', status: 'ENABLE', cardNumber });

test('a full PAN from the provider comes out masked, first 6 and last 4', () => {
  expect(card('4111111111111111').cardNumber).toBe('411111******1111');
  expect(card('4111 1111 1111 1111').cardNumber).toBe('411111******1111');
  expect(card('6011-0009-9013-9424-123').cardNumber).toBe('601100*********4123');
  expect(card(4111111111111111).cardNumber).toBe('411111******1111');
});

test("the provider's own mask passes unchanged, a wider one too", () => {
  expect(card('531993******1234').cardNumber).toBe('531993******1234');
  expect(card('************1234').cardNumber).toBe('************1234');
});

test('a number too short for the mask to hide enough is masked whole; none stays none', () => {
  expect(card('411111111111').cardNumber).toBe('************');
  expect(card('1234').cardNumber).toBe('****');
  expect(card(undefined).cardNumber).toBe('');
  expect(card({ pan: '4111111111111111' }).cardNumber).toBe('');
});

test('an overlong value shows no more than a 19-digit PAN would', () => {
  const shown = maskCardNumber('4'.repeat(3000));
  expect(shown).toBe(`444444${'*'.repeat(9)}4444`);
});
