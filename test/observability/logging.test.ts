/** Redaction is configured once in the logger: card data, secrets and identity data never reach a line. */
import { createLogger, processLogger, CENSOR } from '../../src/logging';
import { loadConfig } from '../../src/config';

const PAN = '4111111111111111';
const CVV = '737';
const ID_NUMBER = 'P12345678';

describe('the structured logger', () => {
  test('finds no card number, CVV, PROVIDER_API_SECRET or idNumber in its output, wherever they were put', () => {
    const config = loadConfig({ PROVIDER_API_SECRET: 'secret_live_9f8e7d6c5b4a' });
    const lines: string[] = [];
    const log = createLogger('test', { level: 'debug', secrets: [config.provider.apiSecret], write: (l) => lines.push(l) });
    log.info(`charged ${PAN} with ${config.provider.apiSecret}`, {
      cardNumber: PAN,
      cvv: CVV,
      idNumber: ID_NUMBER,
      request: { headers: { authorization: `Bearer ${config.provider.apiSecret}` }, body: { cardNumber: PAN, cvv: CVV } },
      form: { idNumber: ID_NUMBER },
      note: `pan ${PAN.replace(/(\d{4})/g, '$1 ').trim()} and secret ${config.provider.apiSecret}`,
      ok: 'crd_123',
    });
    const out = lines.join('');
    for (const secret of [PAN, '4111 1111 1111 1111', CVV, ID_NUMBER, config.provider.apiSecret]) expect(out).not.toContain(secret);
    const line = JSON.parse(lines[0]);
    expect(line).toMatchObject({ level: 'info', component: 'test', cardNumber: CENSOR, cvv: CENSOR, idNumber: CENSOR, ok: 'crd_123' });
  });

  test('honours LOG_LEVEL and writes one JSON object per line', () => {
    const lines: string[] = [];
    const log = createLogger('test', { level: 'warn', write: (l) => lines.push(l) });
    log.info('hidden');
    log.warn('shown', { n: 1 });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', msg: 'shown', n: 1 });
    expect(typeof processLogger('x', loadConfig({})).info).toBe('function');
  });
});

describe('redaction by path', () => {
  const form = { fullName: 'Ada Lovelace', address: '12 St James Square', addressEn: '12 St James Square', city: 'London', postalCode: 'SW1Y 4JH', country: 'GB' };

  test('censors the KYC form address fields where a form travels, and leaves the Temporal address readable', () => {
    const lines: string[] = [];
    const log = createLogger('test', { write: (l) => lines.push(l) });
    log.info('polling', { address: '10.0.0.7:7233', temporalAddress: '10.0.0.7:7233', namespace: 'cards' });
    log.info('submitting', { form, request: { body: form }, activity: { input: form } });
    log.info('card', { card: { billingAddress: { line1: '1 Main St', city: 'Austin' } } });
    const [polling, submitting, card] = lines.map((l) => JSON.parse(l));
    expect(polling).toMatchObject({ address: '10.0.0.7:7233', temporalAddress: '10.0.0.7:7233', namespace: 'cards' });
    for (const carried of [submitting.form, submitting.request.body, submitting.activity.input]) {
      expect(carried).toMatchObject({ address: CENSOR, addressEn: CENSOR, city: CENSOR, postalCode: CENSOR, fullName: CENSOR, country: 'GB' });
    }
    expect(card.card.billingAddress).toBe(CENSOR);
    expect(lines.join('')).not.toMatch(/St James|SW1Y|1 Main St|Austin/);
  });
});
