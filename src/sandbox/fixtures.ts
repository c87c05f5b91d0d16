/** The fixed catalog the sandbox starts with (CONTRACTS §5: BIN fixtures, magic eSIM plans). */
import type { CardBin } from '../provider-api';

export const CARD_BINS: readonly CardBin[] = [
  // A plain non-US VISA: nothing beyond names and amount.
  { cardBinId: 'bin_visa_basic', bin: '485932', brand: 'VISA', issuingCountry: 'SG', currency: 'USD', mobile: false, email: false, supportPin: false, requireKycCardholder: false },
  // US: billingAddress required.
  { cardBinId: 'bin_visa_us', bin: '411111', brand: 'VISA', issuingCountry: 'US', currency: 'USD', mobile: false, email: false, supportPin: false, requireKycCardholder: false },
  // mobilePrefix + mobile and email required.
  { cardBinId: 'bin_mc_contact', bin: '531993', brand: 'MASTERCARD', issuingCountry: 'HK', currency: 'USD', mobile: true, email: true, supportPin: false, requireKycCardholder: false },
  // A PIN may be set at issuance and later.
  { cardBinId: 'bin_visa_pin', bin: '457173', brand: 'VISA', issuingCountry: 'GB', currency: 'USD', mobile: false, email: false, supportPin: true, requireKycCardholder: false },
  // Requires an APPROVED KYC cardholder.
  { cardBinId: 'bin_mc_kyc', bin: '559666', brand: 'MASTERCARD', issuingCountry: 'SG', currency: 'USD', mobile: false, email: false, supportPin: false, requireKycCardholder: true },
];

export interface PlanFixture {
  planNo: string;
  name: string;
  coverage: string[];
  dataMb: number;
  validityDays: number;
  priceCents: number;
  available: boolean;
  /** Magic behaviour: issuance fails and is refunded, or takes esimSlowIssueMs. */
  behaviour: 'normal' | 'fail' | 'slow';
}

export const ESIM_PLANS: readonly PlanFixture[] = [
  { planNo: 'epln_global_1gb', name: 'Global 1 GB / 7 days', coverage: ['GB', 'FR', 'DE', 'JP', 'SG', 'TH'], dataMb: 1024, validityDays: 7, priceCents: 450, available: true, behaviour: 'normal' },
  { planNo: 'epln_asia_5gb', name: 'Asia 5 GB / 30 days', coverage: ['JP', 'SG', 'TH', 'MY', 'KR'], dataMb: 5120, validityDays: 30, priceCents: 1200, available: true, behaviour: 'normal' },
  { planNo: 'epln_eu_10gb', name: 'Europe 10 GB / 30 days', coverage: ['GB', 'FR', 'DE', 'ES', 'IT', 'NL'], dataMb: 10240, validityDays: 30, priceCents: 1990, available: true, behaviour: 'normal' },
  { planNo: 'epln_fail', name: 'Test: issuance fails and is refunded', coverage: ['SG'], dataMb: 1024, validityDays: 7, priceCents: 300, available: true, behaviour: 'fail' },
  { planNo: 'epln_slow', name: 'Test: issues after 10 s', coverage: ['SG'], dataMb: 1024, validityDays: 7, priceCents: 300, available: true, behaviour: 'slow' },
  { planNo: 'epln_soldout', name: 'Test: not available', coverage: ['SG'], dataMb: 1024, validityDays: 7, priceCents: 500, available: false, behaviour: 'normal' },
];

/** arriveCurrency minor units per USD cent, for payout quotes. */
export const PAYOUT_QUOTE_RATES: Readonly<Record<string, number>> = {
  USD: 1, EUR: 0.92, GBP: 0.79, SGD: 1.35, HKD: 7.8, JPY: 150, PHP: 56, INR: 83, MXN: 17, BRL: 5,
};
