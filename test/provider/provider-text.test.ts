/**
 * The provider's free text, capped and scrubbed before it enters failures, history, logs or Nexus
 * answers (provider/provider-text.ts): field errors (names and rules, and how many), the code word,
 * and the failure reasons and messages its answers carry.
 */
import { errorFromResponse, type EndpointRef } from '../../src/provider/errors';
import { toApplicationFailure } from '../../src/activities/provider-call';
import { balanceMoveAnswerSchema, kycCardholderAnswerSchema, operationAnswerSchema, payoutAnswerSchema } from '../../src/provider/answers';
import { MAX_FIELD_ERRORS, MAX_PROVIDER_TEXT, providerText } from '../../src/provider/provider-text';

const fundCard: EndpointRef = { key: 'fundCard', method: 'POST', path: '/cards/:cardId/funding' };
const PAN = '4111111111111111';
const ID_NUMBER = '199001011234';
const EMAIL = 'ada.lovelace+kyc@example.com';

describe('providerText', () => {
  it('masks a run of 12 or more digits, written with or without separators, and keeps shorter figures', () => {
    expect(providerText(`card ${PAN} is blocked`)).toBe('card **************** is blocked');
    expect(providerText('card 4111 1111-1111.1111 is blocked')).toBe('card **** ****-****.**** is blocked');
    expect(providerText(`id ${ID_NUMBER} already registered`)).toBe('id ************ already registered');
    expect(providerText('amount must be at least 100; retry in 12 seconds; order 12345678901')).toBe('amount must be at least 100; retry in 12 seconds; order 12345678901');
  });

  it('masks emails', () => {
    expect(providerText(`${EMAIL} is already registered`)).toBe('***@*** is already registered');
    expect(providerText(`email <${EMAIL}> taken`)).toBe('email ***@*** taken');
  });

  it(`caps a text at ${MAX_PROVIDER_TEXT} characters, and a number at the cap is masked before it is cut`, () => {
    const page = `<html>${'x'.repeat(5000)}</html>`;
    expect(providerText(page)).toHaveLength(MAX_PROVIDER_TEXT);
    const atTheCap = `${'x'.repeat(MAX_PROVIDER_TEXT - 8)}${PAN}`;
    expect(providerText(atTheCap)).not.toMatch(/\d{5}/);
  });
});

describe('field errors from a failure answer', () => {
  const refused = (errors: unknown) => errorFromResponse(400, { code: 400, message: 'VALIDATION_FAILED', errors }, {}, fundCard);

  it('scrub rules and field names of card and identity numbers and emails, in the error, its message and the failure', () => {
    const err = refused({ cardNumber: `card ${PAN} is not valid`, [PAN]: 'unknown card', email: `${EMAIL} is taken`, idNumber: `${ID_NUMBER} exists` });
    expect(err.errors).toEqual({
      cardNumber: 'card **************** is not valid',
      '****************': 'unknown card',
      email: '***@*** is taken',
      idNumber: '************ exists',
    });
    const everywhere = JSON.stringify([err, err.message, toApplicationFailure(err)]);
    for (const secret of [PAN, ID_NUMBER, EMAIL]) expect(everywhere).not.toContain(secret);
  });

  it(`cap each rule at ${MAX_PROVIDER_TEXT} characters and the count at ${MAX_FIELD_ERRORS} fields`, () => {
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field${i}`, 'y'.repeat(10_000)]));
    const err = refused(many);
    expect(Object.keys(err.errors!)).toHaveLength(MAX_FIELD_ERRORS);
    for (const rule of Object.values(err.errors!)) expect(rule.length).toBeLessThanOrEqual(MAX_PROVIDER_TEXT);
    expect(refused([{ field: 'amount', message: 'z'.repeat(10_000) }]).errors!.amount).toHaveLength(MAX_PROVIDER_TEXT);
  });

  it('scrub the code word, which the failure keeps', () => {
    const err = errorFromResponse(400, { code: 400, message: `CARD_${PAN}_BLOCKED: no` }, {}, fundCard);
    expect(err.code).toBe('CARD_****************_BLOCKED');
    expect(JSON.stringify(toApplicationFailure(err))).not.toContain(PAN);
  });
});

describe("the provider's reasons and messages in its answers", () => {
  it('are scrubbed and capped as they are read', () => {
    const reason = `payee account ${PAN} of ${EMAIL} refused: ${'r'.repeat(1000)}`;
    const scrubbedReason = providerText(reason);
    expect(scrubbedReason).not.toContain(PAN);
    expect(payoutAnswerSchema.parse({ merOrderNo: 'po_1', status: 'FAILED', failureReason: reason }).failureReason).toBe(scrubbedReason);
    expect(operationAnswerSchema.parse({ status: 'FAILED', failureReason: reason }).failureReason).toBe(scrubbedReason);
    expect(balanceMoveAnswerSchema.parse({ success: false, message: reason }).message).toBe(scrubbedReason);
    expect(kycCardholderAnswerSchema.parse({ kycStatus: 'REJECTED', reason: `document ${ID_NUMBER} unreadable` }).reason).toBe('document ************ unreadable');
  });

  it('a reason a flow reads a figure from keeps it', () => {
    expect(payoutAnswerSchema.parse({ merOrderNo: 'po_1', status: 'FAILED', failureReason: 'INSUFFICIENT_FUNDS: short by 1250' }).failureReason).toBe('INSUFFICIENT_FUNDS: short by 1250');
  });
});
