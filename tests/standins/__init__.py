"""Stand-in servers on 127.0.0.1 for the real SDKs and clients to talk to in tests."""
