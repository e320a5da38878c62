package io.sluice.drivers;

/** Where the matrix's clients connect: Sluice, as its proxy user, to the matrix's database. */
record Endpoint(String host, int port, String user, String password, String database) {
}
