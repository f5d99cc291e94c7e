/**
 * The Fireblocks simulator's webhook signing key. Fireblocks publishes the public half of its webhook key as
 * a PEM on its "Validate Requests" page, one for production workspaces and one for sandbox; the simulator
 * publishes its own the same way, FIREBLOCKS_SIMULATOR_WEBHOOK_PUBLIC_KEY, which an adapter is configured
 * with in place of Fireblocks' own. The private half is here because the simulator is a test fixture: it
 * signs nothing but simulated events, and no real key is ever this one.
 */

export const FIREBLOCKS_SIMULATOR_WEBHOOK_PUBLIC_KEY = `
-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA2dbXQpJAnezEZT42oJ+c
rk0uxvKgevtGdzSgL+usFkm6Jou4Ed4bpUaHKnZVaeZVFdvSK2lq9cV7UDrUfOqa
JLWIu1Qh6LQXwZWItXnFvCL0V5L8VwmjNrVp6n8vbww3t+XqVk905qhvUm2ixQ+e
ihDa4OamJ+PyhSsMn70cYPAvYfpp/ykW550EYzO7dSwEEHlgk3UscxiNuc54k0Ez
2c7S2CU0eko5JRssXbgMEmNUJ52H+aDeZmcreOUW3nZpRX5I29/FSHc45JuTo/zr
kmH8dOENoDJ1SDmT4A+I2peb14o/+M8U5awQl7UYCEIlsiDnJ0ZHbgSb4x4rYNNN
DQIDAQAB
-----END PUBLIC KEY-----
`.trimStart();

/** Signs the simulator's webhooks (RSA-SHA512), as Fireblocks signs its own with the key it keeps. */
export const FIREBLOCKS_SIMULATOR_WEBHOOK_PRIVATE_KEY = `
-----BEGIN PRIVATE KEY-----
MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQDZ1tdCkkCd7MRl
Pjagn5yuTS7G8qB6+0Z3NKAv66wWSbomi7gR3hulRocqdlVp5lUV29IraWr1xXtQ
OtR86poktYi7VCHotBfBlYi1ecW8IvRXkvxXCaM2tWnqfy9vDDe35epWT3TmqG9S
baLFD56KENrg5qYn4/KFKwyfvRxg8C9h+mn/KRbnnQRjM7t1LAQQeWCTdSxzGI25
zniTQTPZztLYJTR6SjklGyxduAwSY1QnnYf5oN5mZyt45RbedmlFfkjb38VIdzjk
m5Oj/OuSYfx04Q2gMnVIOZPgD4jal5vXij/4zxTlrBCXtRgIQiWyIOcnRkduBJvj
Hitg000NAgMBAAECggEAFfxrjHIDaI0Jg2hkjhCd+S+cDYNWdCMhSQ28Lyn7m+JE
EfjfEpqWsrcsFDqOQ1p2cvbVPwFsRLLyT7YoVRU+in7x9mo24+wtS6ICgsJwFR14
CNCyfDxiRzbHIl5E1NHoW7yuSpjJZTBR0AF1wKrjZu7tkG5nDbahdxRRuVuWXigg
C/5kR/bzWgbXg6GM/k/rvhr4HsHO1NSOsmSwQzGMyK9GuD1LUuj5hw/DKbCbQnFU
0LHh4Iadqcs7lBqiNvENhMN2xZJlvpJdhZOLWnOXMIyR8wL0UgJxYgFKLtHdQiDv
0mdjL2d3lBfpo4MCr8LzfIEWB8ZQXGKBi9omaTJ70QKBgQDvDnsvE8XBHkK8XLoS
mtcGL3STyc3Y5R/plxguRWWaooOEuJ39Kbmun50/XDuZLidO3GxLxfqhdtBV19Wq
emV0ul1/FOG19FituGtF8UxTkvQh9sLgJdiI6HJIzHURsnvo/8fuhY7lJVvAazNe
2wFeIdLaVHLLuix4SjjnFdrNpQKBgQDpR2KoJPz+FjWDFj5/WW97UFvQiHsV6jlL
EBm2O0mmowVuTdD2P0+Zoi3IagMZFGWJ8lyUXtKagOcvwUqgXat/TOAOalnBCK7m
0r5sT+cox5wLn2zn30wmN7HsCZjMV4fu25UhD3MU2bQAs1KEfd2h8j1ZNYFK3wXA
xmcL7ZW1SQKBgAlyiw+7Ok99gKmtCHV/xQuriHHmwcnWlEJJBF2fxHot/gCawzOk
GIB8Mly0qm5NUqRdNbJw6ozDA0zBMOKB38yTKOrCyoDEXVTQOv0Soi+TWS6Wb/En
zbzrYsjZu66tXRRCN4aHpLQNm+io0+jlwtITiB+0wqymeOdwF3uac4E5AoGAOmaT
rVKtP5MhzHKKLOmf/jgs9DTm06KyuzcJqNSI6L3RQz8Z/Dv3Wpf+bDkWE3ZGwVU6
li5y/RkeR5dVbnZk09bUFOfNFoVs+/5wi78pOM1YJJTB9/6wGrVAxr3UUfvr3QF+
ASvT/LlP1gkOtHqqPLvfXfEGME9LKmrBK3xMSXkCgYB4+HDM8MoeeejUCB1fzgzR
85pAGMqAMGkjH/GUojVWxF0IB4q660p6ptYZFqBehk6gEMtptpr5sFYNIo2aImXf
Q7ba0vifXPpivtfsoT8QwKTwy8YQMTvFE++mr9TF9pcQpcib7D6sA0n0PcQ5Tgoc
rEByAuVsQ0rRdPWK1qQe/w==
-----END PRIVATE KEY-----
`.trimStart();
