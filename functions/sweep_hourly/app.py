"""EventBridge hourly schedule: expiry, trace purge and vector-index rebuild for every context, then the purge of idle
rate buckets and the re-send of extraction jobs that never reached the worker."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.composition import get_services
from agent_memory.domain.extraction_resend import resend_stale
from agent_memory.domain.sweeps import HOURLY, purge_idle_rate_buckets, run_all
from agent_memory.observability import logger, metrics


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.info('hourly sweep', extra={'schedule_time': event.get('time')})
    services = get_services()
    result = run_all(services, HOURLY)
    result['rateBucketsPurged'] = purge_idle_rate_buckets(services)
    result['extractionsResent'] = resend_stale(services)
    return result
