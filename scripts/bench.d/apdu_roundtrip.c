/* Median APDU round trip through pcscd + vpcd to whatever card is in READER.
 *   apdu_roundtrip READER COUNT  ->  "apdu_us=<median> p90_us=<p90> sw=<last SW>"
 * The command is SELECT of the Keycard applet (answered from the card's state, no crypto
 * besides the answer itself), so the figure is transport time plus a small card cost. */
#include <PCSC/winscard.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s READER COUNT\n", argv[0]); return 2; }
    int n = atoi(argv[2]);
    SCARDCONTEXT ctx; SCARDHANDLE card; DWORD proto;
    LONG rv = SCardEstablishContext(SCARD_SCOPE_USER, NULL, NULL, &ctx);
    if (rv != SCARD_S_SUCCESS) { fprintf(stderr, "SCardEstablishContext: %s\n", pcsc_stringify_error(rv)); return 1; }
    rv = SCardConnect(ctx, argv[1], SCARD_SHARE_SHARED, SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1, &card, &proto);
    if (rv != SCARD_S_SUCCESS) { fprintf(stderr, "SCardConnect: %s\n", pcsc_stringify_error(rv)); return 1; }
    const SCARD_IO_REQUEST *pci = proto == SCARD_PROTOCOL_T0 ? SCARD_PCI_T0 : SCARD_PCI_T1;
    unsigned char cmd[] = {0x00, 0xA4, 0x04, 0x00, 0x08, 0xA0, 0x00, 0x00, 0x08, 0x04, 0x00, 0x01, 0x01};
    unsigned char resp[300];
    double *t = malloc(sizeof(double) * (size_t)n);
    for (int i = -5; i < n; i++) {  /* five warm-up exchanges */
        DWORD len = sizeof resp;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        rv = SCardTransmit(card, pci, cmd, sizeof cmd, NULL, resp, &len);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (rv != SCARD_S_SUCCESS || len < 2) { fprintf(stderr, "SCardTransmit: %s\n", pcsc_stringify_error(rv)); return 1; }
        if (i >= 0) t[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
        if (i == n - 1) printf("sw=%02X%02X ", resp[len - 2], resp[len - 1]);
    }
    qsort(t, (size_t)n, sizeof(double), cmp);
    printf("apdu_us=%.1f p90_us=%.1f\n", t[n / 2], t[(n * 9) / 10]);
    SCardDisconnect(card, SCARD_LEAVE_CARD);
    SCardReleaseContext(ctx);
    return 0;
}
