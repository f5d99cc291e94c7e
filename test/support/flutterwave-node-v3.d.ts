/** The few parts of `flutterwave-node-v3` (which ships no types) that the simulator's tests call. */
declare module 'flutterwave-node-v3' {
  type Call = (
    data?: Record<string, unknown>,
  ) => Promise<{ status: string; message: string; data: any; meta?: any }>;
  export default class Flutterwave {
    constructor(publicKey: string, secretKey: string, baseUrl?: string);
    Transfer: { initiate: Call; get_a_transfer: Call; fetch: Call };
    Misc: { verify_Account: Call };
    Bank: { country: Call };
    VirtualAcct: { create: Call; fetch: Call };
    Transaction: { verify: Call };
    Settlement: { fetch_all: Call; fetch: Call };
  }
}
