"""The hostile suite runs on the same real services as the integration tests."""

from tests.integration.conftest import (  # noqa: F401  (fixtures, found by name)
    database_url,
    db,
    env,
    fake_graph,
    fake_waha,
    resources,
    s3_server,
    settings,
    whatsapp_settings,
)
