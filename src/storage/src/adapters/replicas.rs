//! Hearing the other replicas (`ports::Replicas`) over pods: every pod's announcements come
//! on the home database's channel; a merchant placed elsewhere is forgotten here, where
//! placements are kept, and never reaches the engine.

use ports::{Announcement, Listening, Pending, Replicas as ReplicaPort};

use crate::fleet::pods::Pods;
use crate::notify::{Announcement as Heard, Listener};
use crate::Replicas;

/// The home database's channel, with the pods whose placements it keeps current.
pub struct PodReplicas {
    pub replicas: Replicas,
    pub pods: Pods,
}

impl ReplicaPort for PodReplicas {
    fn listen<'a>(&'a self, name: &'a str) -> Pending<'a, Box<dyn Listening>> {
        Box::pin(async move {
            let listener = self.replicas.listen(name).await?;
            // Whatever was cached before now may have missed announcements.
            self.pods.forget_all();
            Ok(Box::new(PodListening {
                listener,
                pods: self.pods.clone(),
            }) as Box<dyn Listening>)
        })
    }
}

struct PodListening {
    listener: Listener,
    pods: Pods,
}

impl Listening for PodListening {
    fn go_live(&mut self) {
        self.listener.go_live();
    }

    fn next(&mut self) -> Pending<'_, Announcement> {
        Box::pin(async move {
            loop {
                match self.listener.next().await? {
                    Heard::MerchantPlaced(merchant_id) => self.pods.forget(merchant_id),
                    Heard::MerchantChanged {
                        merchant_id,
                        version,
                    } => {
                        return Ok(Announcement::MerchantChanged {
                            merchant_id,
                            version,
                        })
                    }
                    Heard::TokensRevoked(hashes) => return Ok(Announcement::TokensRevoked(hashes)),
                }
            }
        })
    }
}
