"""What every test server shares: a free port, and stopping a server's process group.

The same helpers start the servers todeval itself runs (:mod:`stores.local_servers`).
"""

from todeval.stores.local_servers import free_port, log_tail, stop_group

__all__ = ["free_port", "log_tail", "stop_group"]
