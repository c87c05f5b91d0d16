/** Reads of the sandbox through our real provider client, for test set-up (finding fixture BINs). */
import { createProviderClient } from '../../src/provider/client';
import type { CardBinAnswer as CardBin } from '../../src/provider/answers';
import type { Stack } from './stack';

export async function fixtureBins(stack: Stack): Promise<Record<'plain' | 'us' | 'contact' | 'pin' | 'kyc', CardBin>> {
  const client = createProviderClient(stack.config.provider);
  try {
    const bins = await client.listCardBins();
    const find = (pred: (b: CardBin) => boolean, what: string) => {
      const bin = bins.find(pred);
      if (!bin) throw new Error(`sandbox fixtures have no ${what} BIN`);
      return bin;
    };
    const plainRules = (b: CardBin) => !b.mobile && !b.email && !b.requireKycCardholder && b.issuingCountry !== 'US';
    return {
      plain: find((b) => plainRules(b) && !b.supportPin, 'plain'),
      us: find((b) => b.issuingCountry === 'US' && !b.requireKycCardholder, 'US'),
      contact: find((b) => !!b.mobile && !!b.email && !b.requireKycCardholder, 'mobile+email'),
      pin: find((b) => !!b.supportPin && !b.mobile && !b.email && !b.requireKycCardholder && b.issuingCountry !== 'US', 'PIN'),
      kyc: find((b) => !!b.requireKycCardholder, 'KYC'),
    };
  } finally {
    await client.close();
  }
}
